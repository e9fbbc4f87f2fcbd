import sys


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n, k = int(data[0]), int(data[1])
    a = data[2:2 + n]  # the types only need to be compared, so bytes tokens are fine
    count = {}
    left = best = 0
    for right in range(n):
        t = a[right]
        count[t] = count.get(t, 0) + 1
        while len(count) > k:  # shrink until at most k types remain
            u = a[left]
            count[u] -= 1
            if count[u] == 0:
                del count[u]
            left += 1
        if right - left + 1 > best:
            best = right - left + 1
    print(best)


main()
