#include <bits/stdc++.h>
using namespace std;

int main() {
    int n, k;
    scanf("%d %d", &n, &k);
    unordered_map<int, int> seen;
    int pairs = 0;
    for (int i = 0; i < n; i++) {
        int a;
        scanf("%d", &a);
        auto it = seen.find(a ^ k);
        if (it != seen.end()) pairs += it->second;
        seen[a]++;
    }
    printf("%d\n", pairs);
}
