#include <bits/stdc++.h>
using namespace std;

int main() {
    int n, k;
    scanf("%d %d", &n, &k);
    vector<int> a(n);
    for (auto &x : a) scanf("%d", &x);
    sort(a.begin(), a.end());
    long long pairs = 0;
    for (int i = 0; i < n; i++) {
        // partners of a[i] are equal to a[i]^k; count those at larger sorted positions
        int want = a[i] ^ k;
        auto range = equal_range(a.begin() + i + 1, a.end(), want);
        pairs += range.second - range.first;
    }
    printf("%lld\n", pairs);
}
