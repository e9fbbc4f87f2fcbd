#include <bits/stdc++.h>
using namespace std;

int main() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    int n;
    cin >> n;
    vector<pair<long long, string>> rows(n);  // (-score, name)
    for (auto &[neg, name] : rows) {
        long long score;
        cin >> name >> score;
        neg = -score;
    }
    sort(rows.begin(), rows.end());
    string out;
    for (auto &[neg, name] : rows) out += name + "\n";
    cout << out;
}
