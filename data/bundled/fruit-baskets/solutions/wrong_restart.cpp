#include <bits/stdc++.h>
using namespace std;

int main() {
    int n, k;
    scanf("%d %d", &n, &k);
    vector<int> a(n);
    for (auto &x : a) scanf("%d", &x);
    map<int, int> count;
    int left = 0, best = 0;
    for (int right = 0; right < n; right++) {
        count[a[right]]++;
        if ((int)count.size() > k) {
            // too many types: start a fresh stretch at this tree
            count.clear();
            count[a[right]] = 1;
            left = right;
        }
        best = max(best, right - left + 1);
    }
    printf("%d\n", best);
}
