import sys


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n, k = int(data[0]), int(data[1])
    seen = {}
    pairs = 0
    for tok in data[2:2 + n]:
        a = int(tok)
        pairs += seen.get(a ^ k, 0)  # earlier guests that match this one
        seen[a] = seen.get(a, 0) + 1
    print(pairs)


main()
