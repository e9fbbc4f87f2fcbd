import sys


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n, k = int(data[0]), int(data[1])
    a = sorted(map(int, data[2:2 + n]))
    lo, hi, count = 0, n - 1, 0
    while lo < hi:
        if a[lo] + a[hi] <= k:
            count += hi - lo  # a[lo] pairs with every index in (lo, hi]
            lo += 1
        else:
            hi -= 1
    print(count)


main()
