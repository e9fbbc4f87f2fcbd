#include <bits/stdc++.h>
using namespace std;

int main() {
    int n, q;
    scanf("%d %d", &n, &q);
    vector<int> prefix(n + 1, 0);
    for (int i = 1; i <= n; i++) {
        int x;
        scanf("%d", &x);
        prefix[i] = prefix[i - 1] + x;
    }
    while (q--) {
        int l, r;
        scanf("%d %d", &l, &r);
        if (l > r) swap(l, r);
        printf("%d\n", prefix[r] - prefix[l - 1]);
    }
}
