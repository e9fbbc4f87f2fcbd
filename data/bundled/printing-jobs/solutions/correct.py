import sys


def blocks_needed(a: list[int], cap: int) -> int:
    blocks, load = 1, 0
    for x in a:
        if load + x > cap:
            blocks += 1
            load = 0
        load += x
    return blocks


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n, k = int(data[0]), int(data[1])
    a = list(map(int, data[2:2 + n]))
    lo, hi = max(a), sum(a)  # the answer lies in [largest document, all pages]
    while lo < hi:
        mid = (lo + hi) // 2
        if blocks_needed(a, mid) <= k:
            hi = mid
        else:
            lo = mid + 1
    print(lo)


main()
