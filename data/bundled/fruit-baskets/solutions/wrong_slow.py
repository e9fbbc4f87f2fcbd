import sys


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n, k = int(data[0]), int(data[1])
    a = list(map(int, data[2:2 + n]))
    best = 0
    for left in range(n):
        types = set()
        right = left
        while right < n:
            types.add(a[right])
            if len(types) > k:
                break
            right += 1
        best = max(best, right - left)
    print(best)


main()
