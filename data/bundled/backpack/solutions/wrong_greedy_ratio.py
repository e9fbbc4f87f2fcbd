import sys


def main() -> None:
    data = sys.stdin.read().split()
    n, cap = int(data[0]), int(data[1])
    items = [(int(data[2 + 2 * i]), int(data[3 + 2 * i])) for i in range(n)]
    items.sort(key=lambda it: it[1] / it[0], reverse=True)
    total, used = 0, 0
    for w, v in items:
        if used + w <= cap:
            used += w
            total += v
    print(total)


main()
