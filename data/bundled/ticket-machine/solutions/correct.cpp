#include <bits/stdc++.h>
using namespace std;

int main() {
    const long long MOD = 1000000007LL;
    int n, x;
    scanf("%d %d", &n, &x);
    vector<long long> ways(x + 1, 0);
    ways[0] = 1;
    for (int i = 0; i < n; i++) {
        int c;
        scanf("%d", &c);
        for (int t = c; t <= x; t++) ways[t] = (ways[t] + ways[t - c]) % MOD;
    }
    printf("%lld\n", ways[x]);
}
