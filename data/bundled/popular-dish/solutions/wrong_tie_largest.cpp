#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    scanf("%d", &n);
    map<int, int> counts;
    for (int i = 0; i < n; i++) {
        int x;
        scanf("%d", &x);
        counts[x]++;
    }
    int best_code = 0, best = 0;
    for (auto [code, times] : counts)
        if (times >= best) { best = times; best_code = code; }
    printf("%d %d\n", best_code, best);
}
