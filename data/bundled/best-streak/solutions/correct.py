import sys


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    best = cur = int(data[1])
    for tok in data[2:n + 1]:
        x = int(tok)
        cur = x if cur < 0 else cur + x
        if cur > best:
            best = cur
    print(best)


main()
