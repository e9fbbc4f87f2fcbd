#include <bits/stdc++.h>
using namespace std;

int main() {
    int n, m;
    scanf("%d %d", &n, &m);
    vector<vector<int>> after(n + 1);
    vector<int> indeg(n + 1, 0);
    for (int i = 0; i < m; i++) {
        int a, b;
        scanf("%d %d", &a, &b);
        after[a].push_back(b);
        indeg[b]++;
    }
    priority_queue<int, vector<int>, greater<int>> ready;
    for (int c = 1; c <= n; c++) if (indeg[c] == 0) ready.push(c);
    vector<int> order;
    while (!ready.empty()) {
        int c = ready.top();
        ready.pop();
        order.push_back(c);
        for (int nxt : after[c]) if (--indeg[nxt] == 0) ready.push(nxt);
    }
    if (order.empty()) { puts("-1"); return 0; }
    for (size_t i = 0; i < order.size(); i++) printf("%d%c", order[i], i + 1 < order.size() ? ' ' : '\n');
}
