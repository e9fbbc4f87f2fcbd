#include <bits/stdc++.h>
using namespace std;

bool is_prime(int x) {
    if (x < 2) return false;
    for (int d = 2; d * d <= x; d++)
        if (x % d == 0) return false;
    return true;
}

int main() {
    int n;
    scanf("%d", &n);
    int count = 0;
    for (int x = 2; x <= n; x++) count += is_prime(x);
    printf("%d\n", count);
}
