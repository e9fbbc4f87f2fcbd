#include <bits/stdc++.h>
using namespace std;

int main() {
    int n, cap;
    scanf("%d %d", &n, &cap);
    vector<long long> best(cap + 1, 0);
    for (int i = 0; i < n; i++) {
        int w;
        long long v;
        scanf("%d %lld", &w, &v);
        for (int c = cap; c >= w; c--) best[c] = max(best[c], best[c - w] + v);
    }
    printf("%lld\n", best[cap]);
}
