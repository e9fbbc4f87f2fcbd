import sys


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    xs = list(map(int, data[1:1 + 2 * n:2]))
    ys = list(map(int, data[2:2 + 2 * n:2]))
    twice = 0  # exact shoelace sum in Python integers
    for i in range(n):
        j = i + 1 if i + 1 < n else 0
        twice += xs[i] * ys[j] - xs[j] * ys[i]
    twice = abs(twice)
    print(f"{twice // 2}.{5 if twice % 2 else 0}")


main()
