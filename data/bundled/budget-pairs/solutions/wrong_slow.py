import sys


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n, k = int(data[0]), int(data[1])
    a = list(map(int, data[2:2 + n]))
    count = 0
    for i in range(n):
        ai = a[i]
        for j in range(i + 1, n):
            if ai + a[j] <= k:
                count += 1
    print(count)


main()
