#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    long long target;
    scanf("%d %lld", &n, &target);
    vector<long long> a(n);
    for (auto &x : a) scanf("%lld", &x);
    sort(a.begin(), a.end());
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        long long s = a[lo] + a[hi];
        if (s == target) { printf("%d %d\n", lo + 1, hi + 1); return 0; }
        if (s < target) lo++; else hi--;
    }
    printf("-1\n");
}
