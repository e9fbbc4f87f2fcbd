"""Small real programs in each language for the edit tests (sum of 0..n-1, read from stdin)."""

PROGRAMS = {
    "python": (
        "#!/usr/bin/env python3\n"
        "import sys\n"
        "\n"
        "def solve(data):\n"
        "    n = int(data[0])\n"
        "    total = 0\n"
        "    for i in range(n):\n"
        "        total += i\n"
        "    return total\n"
        "\n"
        "values = sys.stdin.read().split()\n"
        'print(solve(values), end="\\n")  # answer\n'
    ),
    "cpp": (
        "#include <bits/stdc++.h>\n"
        "using namespace std;\n"
        "\n"
        "int main() {\n"
        "    long long n;\n"
        "    cin >> n;\n"
        "    long long total = 0;\n"
        "    for (long long i = 0; i < n; i++) total += i;\n"
        '    cout << total << "\\n"; /* answer */\n'
        "    return 0;\n"
        "}\n"
    ),
    "java": (
        "import java.util.*;\n"
        "\n"
        "public class Main {\n"
        "    public static void main(String[] args) {\n"
        "        Scanner in = new Scanner(System.in);\n"
        "        long n = in.nextLong();\n"
        "        long total = 0;\n"
        "        for (long i = 0; i < n; i++) {\n"
        "            total += i;\n"
        "        }\n"
        "        System.out.println(total);\n"
        "    }\n"
        "}\n"
    ),
}
