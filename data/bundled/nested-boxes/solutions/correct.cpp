#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    if (!(cin >> n)) return 0;
    string log;
    if (n > 0) cin >> log;
    string stack;
    int best = 0;
    for (char ch : log) {
        if (ch == '(' || ch == '[' || ch == '{') {
            stack.push_back(ch);
            best = max(best, (int)stack.size());
            continue;
        }
        char want = ch == ')' ? '(' : ch == ']' ? '[' : '{';
        if (stack.empty() || stack.back() != want) { puts("-1"); return 0; }
        stack.pop_back();
    }
    printf("%d\n", stack.empty() ? best : -1);
}
