import sys
from collections import Counter


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n, k = int(data[0]), int(data[1])
    count = Counter(map(int, data[2:2 + n]))
    total = 0
    for value, c in count.items():
        total += c * count.get(value ^ k, 0)
    print(total // 2)


main()
