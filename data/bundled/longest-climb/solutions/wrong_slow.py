import sys


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    h = list(map(int, data[1:n + 1]))
    best = [1] * n
    for i in range(n):
        hi = h[i]
        for j in range(i):
            if h[j] < hi and best[j] + 1 > best[i]:
                best[i] = best[j] + 1
    print(max(best))


main()
