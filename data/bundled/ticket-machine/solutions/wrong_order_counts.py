import sys

MOD = 1_000_000_007


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n, x = int(data[0]), int(data[1])
    coins = list(map(int, data[2:2 + n]))
    ways = [1] + [0] * x
    for total in range(1, x + 1):
        for c in coins:
            if c <= total:
                ways[total] = (ways[total] + ways[total - c]) % MOD
    print(ways[x])


main()
