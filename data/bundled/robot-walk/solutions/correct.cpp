#include <bits/stdc++.h>
using namespace std;

int main() {
    int n, m, r, c;
    cin >> n >> m >> r >> c;
    vector<string> grid(n);
    for (auto &row : grid) cin >> row;
    string program;
    cin >> program;
    r--, c--;
    int blocked = 0;
    for (char cmd : program) {
        int nr = r + (cmd == 'D') - (cmd == 'U');
        int nc = c + (cmd == 'R') - (cmd == 'L');
        if (nr >= 0 && nr < n && nc >= 0 && nc < m && grid[nr][nc] != '#') r = nr, c = nc;
        else blocked++;
    }
    printf("%d %d %d\n", r + 1, c + 1, blocked);
}
