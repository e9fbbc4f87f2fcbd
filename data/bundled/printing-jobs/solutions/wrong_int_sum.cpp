#include <bits/stdc++.h>
using namespace std;

int main() {
    int n, k;
    scanf("%d %d", &n, &k);
    vector<int> a(n);
    for (auto &x : a) scanf("%d", &x);
    int lo = *max_element(a.begin(), a.end()), hi = 0;
    for (int x : a) hi += x;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        int blocks = 1, load = 0;
        for (int x : a) {
            if (load + x > mid) { blocks++; load = 0; }
            load += x;
        }
        if (blocks <= k) hi = mid; else lo = mid + 1;
    }
    printf("%d\n", lo);
}
