import math
import sys

MOD = 1_000_000_007


def main() -> None:
    data = sys.stdin.read().split()
    t = int(data[0])
    sqrt5 = math.sqrt(5)
    phi = (1 + sqrt5) / 2
    for x in data[1:t + 1]:
        n = int(x)
        # Binet's formula: F(n) is the integer nearest to phi^n / sqrt(5)
        print(round(phi ** n / sqrt5) % MOD)


main()
