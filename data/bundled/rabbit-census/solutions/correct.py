import sys

MOD = 1_000_000_007


def fib_pair(n: int) -> tuple[int, int]:
    """(F(n), F(n+1)) mod MOD by fast doubling, iterating over the bits of n."""
    a, b = 0, 1
    for bit in bin(n)[2:]:
        c = a * ((2 * b - a) % MOD) % MOD  # F(2k)
        d = (a * a + b * b) % MOD  # F(2k+1)
        a, b = (d, (c + d) % MOD) if bit == "1" else (c, d)
    return a, b


def main() -> None:
    data = sys.stdin.read().split()
    t = int(data[0])
    print("\n".join(str(fib_pair(int(x))[0]) for x in data[1:t + 1]))


main()
