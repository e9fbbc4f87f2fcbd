#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    scanf("%d", &n);
    vector<long long> x(n), y(n);
    for (int i = 0; i < n; i++) scanf("%lld %lld", &x[i], &y[i]);
    __int128 twice = 0;
    for (int i = 0; i < n; i++) {
        int j = (i + 1) % n;
        twice += (__int128)x[i] * y[j] - (__int128)x[j] * y[i];
    }
    if (twice < 0) twice = -twice;
    long long t = (long long)twice;
    printf("%lld.%d\n", t / 2, t % 2 ? 5 : 0);
}
