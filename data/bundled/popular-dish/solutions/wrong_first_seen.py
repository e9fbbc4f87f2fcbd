import sys
from collections import Counter


def main() -> None:
    data = sys.stdin.read().split()
    n = int(data[0])
    counts = Counter(int(x) for x in data[1:n + 1])
    code, times = counts.most_common(1)[0]
    print(code, times)


main()
