#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    scanf("%d", &n);
    vector<long long> tails;
    for (int i = 0; i < n; i++) {
        long long h;
        scanf("%lld", &h);
        auto it = lower_bound(tails.begin(), tails.end(), h);
        if (it == tails.end()) tails.push_back(h);
        else *it = h;
    }
    printf("%zu\n", tails.size());
}
