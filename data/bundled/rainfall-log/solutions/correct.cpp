#include <bits/stdc++.h>
using namespace std;

int main() {
    int n, q;
    scanf("%d %d", &n, &q);
    vector<long long> prefix(n + 1, 0);
    for (int i = 1; i <= n; i++) {
        long long x;
        scanf("%lld", &x);
        prefix[i] = prefix[i - 1] + x;
    }
    string out;
    while (q--) {
        int l, r;
        scanf("%d %d", &l, &r);
        if (l > r) swap(l, r);
        out += to_string(prefix[r] - prefix[l - 1]);
        out += '\n';
    }
    fputs(out.c_str(), stdout);
}
