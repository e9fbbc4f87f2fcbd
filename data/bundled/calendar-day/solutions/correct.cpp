#include <bits/stdc++.h>
using namespace std;

bool leap(long long y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// days before year y (since 0001-01-01), then before month m, then the day itself
long long day_number(long long y, int m, int d) {
    static const int before[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
    long long p = y - 1;
    long long days = p * 365 + p / 4 - p / 100 + p / 400;
    days += before[m - 1] + (m > 2 && leap(y) ? 1 : 0);
    return days + d - 1;
}

int main() {
    const char *names[] = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};
    int t;
    scanf("%d", &t);
    while (t--) {
        long long y;
        int m, d;
        scanf("%lld %d %d", &y, &m, &d);
        puts(names[day_number(y, m, d) % 7]);
    }
}
