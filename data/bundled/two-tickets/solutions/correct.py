import sys


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n, target = int(data[0]), int(data[1])
    seen = {}  # cost -> index of an earlier trip with that cost
    for j in range(1, n + 1):
        cost = int(data[1 + j])
        i = seen.get(target - cost)
        if i is not None:
            print(i, j)
            return
        seen.setdefault(cost, j)
    print(-1)


main()
