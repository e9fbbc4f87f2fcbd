#include <bits/stdc++.h>
using namespace std;
typedef unsigned long long u64;

u64 mulmod(u64 a, u64 b, u64 m) { return (unsigned __int128)a * b % m; }

u64 power(u64 a, u64 b, u64 m) {
    u64 result = 1 % m;
    a %= m;
    while (b) {
        if (b & 1) result = mulmod(result, a, m);
        a = mulmod(a, a, m);
        b >>= 1;
    }
    return result;
}

int main() {
    int t;
    scanf("%d", &t);
    while (t--) {
        u64 a, b, m;
        scanf("%llu %llu %llu", &a, &b, &m);
        printf("%llu\n", power(a, b, m));
    }
}
