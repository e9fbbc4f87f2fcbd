import sys
from bisect import bisect_left


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    tails = []  # tails[k] = smallest last value of a strictly increasing run of length k + 1
    for h in map(int, data[1:n + 1]):
        k = bisect_left(tails, h)
        if k == len(tails):
            tails.append(h)
        else:
            tails[k] = h
    print(len(tails))


main()
