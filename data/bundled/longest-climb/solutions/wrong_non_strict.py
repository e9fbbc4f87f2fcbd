import sys
from bisect import bisect_right


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    tails = []
    for h in map(int, data[1:n + 1]):
        k = bisect_right(tails, h)
        if k == len(tails):
            tails.append(h)
        else:
            tails[k] = h
    print(len(tails))


main()
