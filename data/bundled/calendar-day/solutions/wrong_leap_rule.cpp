#include <bits/stdc++.h>
using namespace std;

// Count days from 2000-01-01, a Saturday. Every fourth year is a leap year.
int main() {
    const char *names[] = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};
    const int month_len[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int t;
    scanf("%d", &t);
    while (t--) {
        int y, m, d;
        scanf("%d %d %d", &y, &m, &d);
        long long days = 0;
        for (int yy = 2000; yy < y; yy++) days += (yy % 4 == 0) ? 366 : 365;
        for (int yy = y; yy < 2000; yy++) days -= (yy % 4 == 0) ? 366 : 365;
        for (int mm = 1; mm < m; mm++) days += month_len[mm - 1] + (mm == 2 && y % 4 == 0 ? 1 : 0);
        days += d - 1;
        long long idx = ((days + 5) % 7 + 7) % 7;
        puts(names[idx]);
    }
}
