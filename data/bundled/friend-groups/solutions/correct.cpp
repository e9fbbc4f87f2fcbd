#include <bits/stdc++.h>
using namespace std;

vector<int> parent;

int find(int x) {
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

int main() {
    int n, m;
    scanf("%d %d", &n, &m);
    parent.resize(n + 1);
    iota(parent.begin(), parent.end(), 0);
    int groups = n;
    for (int i = 0; i < m; i++) {
        int a, b;
        scanf("%d %d", &a, &b);
        a = find(a), b = find(b);
        if (a != b) { parent[a] = b; groups--; }
    }
    printf("%d\n", groups);
}
