#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    long long k;
    scanf("%d %lld", &n, &k);
    vector<int> a(n);
    for (auto &x : a) scanf("%d", &x);
    sort(a.begin(), a.end());
    int count = 0;
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        if (a[lo] + a[hi] <= k) { count += hi - lo; lo++; }
        else hi--;
    }
    printf("%d\n", count);
}
