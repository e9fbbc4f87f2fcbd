import sys


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n, k = int(data[0]), int(data[1])
    a = list(map(int, data[2:2 + n]))
    pairs = 0
    for i in range(n):
        want = a[i] ^ k
        for j in range(i + 1, n):
            if a[j] == want:
                pairs += 1
    print(pairs)


main()
