import sys


def power(a: int, b: int, m: int) -> int:
    if b == 0:
        return 1
    half = power(a, b // 2, m)
    result = half * half % m
    if b % 2:
        result = result * a % m
    return result


def main() -> None:
    data = sys.stdin.read().split()
    t = int(data[0])
    for i in range(t):
        a, b, m = int(data[1 + 3 * i]), int(data[2 + 3 * i]), int(data[3 + 3 * i])
        print(power(a % m, b, m))


main()
