#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<pair<string, long long>> rows(n);
    for (auto &[name, score] : rows) cin >> name >> score;
    stable_sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) { return a.second > b.second; });
    for (auto &[name, score] : rows) cout << name << "\n";
}
