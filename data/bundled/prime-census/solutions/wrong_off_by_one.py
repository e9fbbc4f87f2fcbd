import sys


def main() -> None:
    n = int(sys.stdin.read().split()[0])
    sieve = bytearray([1]) * max(n, 2)
    sieve[0] = sieve[1] = 0
    i = 2
    while i * i < n:
        if sieve[i]:
            sieve[i * i::i] = bytes(len(range(i * i, n, i)))
        i += 1
    print(sieve.count(1))


main()
