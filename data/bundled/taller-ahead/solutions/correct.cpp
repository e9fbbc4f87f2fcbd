#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    scanf("%d", &n);
    vector<long long> h(n);
    for (auto &x : h) scanf("%lld", &x);
    vector<int> answer(n, 0), stack;
    for (int j = 0; j < n; j++) {
        while (!stack.empty() && h[stack.back()] < h[j]) {
            answer[stack.back()] = j + 1;
            stack.pop_back();
        }
        stack.push_back(j);
    }
    for (int i = 0; i < n; i++) printf("%d%c", answer[i], i + 1 < n ? ' ' : '\n');
}
