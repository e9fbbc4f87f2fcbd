import sys

NAMES = ["Saturday", "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


def main() -> None:
    data = sys.stdin.read().split()
    t = int(data[0])
    for i in range(t):
        y, m, d = int(data[1 + 3 * i]), int(data[2 + 3 * i]), int(data[3 + 3 * i])
        k, j = y % 100, y // 100
        h = (d + 13 * (m + 1) // 5 + k + k // 4 + j // 4 + 5 * j) % 7
        print(NAMES[h])


main()
