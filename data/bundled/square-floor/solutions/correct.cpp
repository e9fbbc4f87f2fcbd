#include <bits/stdc++.h>
using namespace std;

// Largest k with k*k <= x, exact for every x <= 1e18 (no floating point).
unsigned long long isqrt(unsigned long long x) {
    unsigned long long lo = 0, hi = 1000000001ULL;  // hi*hi > 1e18
    while (hi - lo > 1) {
        unsigned long long mid = (lo + hi) / 2;
        if (mid * mid <= x) lo = mid; else hi = mid;
    }
    return lo;
}

int main() {
    int t;
    scanf("%d", &t);
    while (t--) {
        unsigned long long x;
        scanf("%llu", &x);
        printf("%llu\n", isqrt(x));
    }
}
