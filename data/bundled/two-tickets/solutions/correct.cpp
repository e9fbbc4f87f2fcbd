#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    long long target;
    scanf("%d %lld", &n, &target);
    vector<pair<long long, int>> a(n);
    for (int i = 0; i < n; i++) { scanf("%lld", &a[i].first); a[i].second = i + 1; }
    sort(a.begin(), a.end());
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        long long s = a[lo].first + a[hi].first;
        if (s == target) {
            int i = a[lo].second, j = a[hi].second;
            printf("%d %d\n", min(i, j), max(i, j));
            return 0;
        }
        if (s < target) lo++; else hi--;
    }
    printf("-1\n");
}
