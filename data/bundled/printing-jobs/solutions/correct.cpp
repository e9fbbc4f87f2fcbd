#include <bits/stdc++.h>
using namespace std;

int main() {
    int n, k;
    scanf("%d %d", &n, &k);
    vector<long long> a(n);
    for (auto &x : a) scanf("%lld", &x);
    long long lo = *max_element(a.begin(), a.end()), hi = accumulate(a.begin(), a.end(), 0LL);
    auto fits = [&](long long cap) {
        int blocks = 1;
        long long load = 0;
        for (long long x : a) {
            if (load + x > cap) { blocks++; load = 0; }
            load += x;
        }
        return blocks <= k;
    };
    while (lo < hi) {
        long long mid = lo + (hi - lo) / 2;
        if (fits(mid)) hi = mid; else lo = mid + 1;
    }
    printf("%lld\n", lo);
}
