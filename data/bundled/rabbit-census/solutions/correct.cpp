#include <bits/stdc++.h>
using namespace std;
typedef unsigned long long u64;
const u64 MOD = 1000000007ULL;

// 2x2 matrix power of [[1,1],[1,0]]; entries stay below MOD so products fit in 64 bits
struct M { u64 a, b, c, d; };
M mul(const M &x, const M &y) {
    return {(x.a * y.a + x.b * y.c) % MOD, (x.a * y.b + x.b * y.d) % MOD,
            (x.c * y.a + x.d * y.c) % MOD, (x.c * y.b + x.d * y.d) % MOD};
}

int main() {
    int t;
    scanf("%d", &t);
    while (t--) {
        u64 n;
        scanf("%llu", &n);
        M result = {1, 0, 0, 1}, base = {1, 1, 1, 0};
        while (n) {
            if (n & 1) result = mul(result, base);
            base = mul(base, base);
            n >>= 1;
        }
        printf("%llu\n", result.b);  // [[F(n+1), F(n)], [F(n), F(n-1)]]
    }
}
