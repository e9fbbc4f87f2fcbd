#include <bits/stdc++.h>
using namespace std;

int main() {
    int n, m, r, c;
    cin >> n >> m >> r >> c;
    vector<string> grid(n);
    for (auto &row : grid) cin >> row;
    string program;
    cin >> program;
    int blocked = 0;
    // rows and columns are 1-based here
    for (char cmd : program) {
        int nr = r + (cmd == 'D') - (cmd == 'U');
        int nc = c + (cmd == 'R') - (cmd == 'L');
        if (nr >= 1 && nr <= n && nc >= 1 && nc <= m && grid[nr - 1][nc - 1] != '#') r = nr, c = nc;
        else if (nr < 1 || nr > n || nc < 1 || nc > m) blocked++;
    }
    printf("%d %d %d\n", r, c, blocked);
}
