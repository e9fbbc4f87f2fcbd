#include <bits/stdc++.h>
using namespace std;

int main() {
    int n, k;
    scanf("%d %d", &n, &k);
    vector<int> a(n);
    for (auto &x : a) scanf("%d", &x);
    // compress types to 0..n-1 so counts live in an array
    vector<int> sorted_types(a);
    sort(sorted_types.begin(), sorted_types.end());
    for (auto &x : a) x = lower_bound(sorted_types.begin(), sorted_types.end(), x) - sorted_types.begin();
    vector<int> count(n, 0);
    int distinct = 0, left = 0, best = 0;
    for (int right = 0; right < n; right++) {
        if (count[a[right]]++ == 0) distinct++;
        while (distinct > k)
            if (--count[a[left++]] == 0) distinct--;
        best = max(best, right - left + 1);
    }
    printf("%d\n", best);
}
