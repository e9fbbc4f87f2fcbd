#include <bits/stdc++.h>
using namespace std;

int main() {
    string s;
    cin >> s;
    string out;
    int run = 1;
    for (size_t i = 1; i <= s.size(); i++) {
        if (i < s.size() && s[i] == s[i - 1]) { run++; continue; }
        out += s[i - 1];
        out += char('0' + run);
        run = 1;
    }
    printf("%s\n", out.c_str());
}
