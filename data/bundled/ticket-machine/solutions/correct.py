import sys

MOD = 1_000_000_007


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n, x = int(data[0]), int(data[1])
    ways = [1] + [0] * x
    for c in map(int, data[2:2 + n]):
        # coins in the outer loop: each multiset is counted once, in coin order
        for total in range(c, x + 1):
            ways[total] = (ways[total] + ways[total - c]) % MOD
    print(ways[x])


main()
