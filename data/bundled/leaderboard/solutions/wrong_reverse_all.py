import sys


def main() -> None:
    data = sys.stdin.read().split()
    n = int(data[0])
    rows = [(int(data[2 + 2 * i]), data[1 + 2 * i]) for i in range(n)]
    rows.sort(reverse=True)
    for _, name in rows:
        print(name)


main()
