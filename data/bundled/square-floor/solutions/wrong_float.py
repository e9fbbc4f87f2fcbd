import sys


def main() -> None:
    data = sys.stdin.read().split()
    t = int(data[0])
    for x in data[1:t + 1]:
        print(int(int(x) ** 0.5))


main()
