#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    scanf("%d", &n);
    vector<int> x(n), y(n);
    for (int i = 0; i < n; i++) scanf("%d %d", &x[i], &y[i]);
    long long twice = 0;
    for (int i = 0; i < n; i++) {
        int j = (i + 1) % n;
        twice += x[i] * y[j] - x[j] * y[i];
    }
    printf("%.1f\n", fabs((double)twice) / 2);
}
