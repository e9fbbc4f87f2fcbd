#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    scanf("%d", &n);
    vector<pair<int, int>> slots(n);  // (start, end)
    for (auto &[s, e] : slots) scanf("%d %d", &s, &e);
    sort(slots.begin(), slots.end());
    int taken = 0;
    long long free_at = -1;
    for (auto &[s, e] : slots)
        if (s >= free_at) { taken++; free_at = e; }
    printf("%d\n", taken);
}
