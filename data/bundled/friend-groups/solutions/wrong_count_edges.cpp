#include <bits/stdc++.h>
using namespace std;

int main() {
    int n, m;
    scanf("%d %d", &n, &m);
    set<pair<int, int>> edges;
    for (int i = 0; i < m; i++) {
        int a, b;
        scanf("%d %d", &a, &b);
        if (a > b) swap(a, b);
        if (a != b) edges.insert({a, b});
    }
    // every distinct friendship merges two groups
    printf("%d\n", n - (int)edges.size());
}
