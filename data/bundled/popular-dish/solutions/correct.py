import sys
from collections import Counter


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    counts = Counter(map(int, data[1:n + 1]))
    code, times = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    print(code, times)


main()
