#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    scanf("%d", &n);
    vector<long long> c(n);
    for (auto &x : c) scanf("%lld", &x);
    sort(c.begin(), c.end());
    long long best_code = c[0];
    int best = 0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && c[j] == c[i]) j++;
        if (j - i > best) { best = j - i; best_code = c[i]; }  // strict: keeps the smallest on ties
        i = j;
    }
    printf("%lld %d\n", best_code, best);
}
