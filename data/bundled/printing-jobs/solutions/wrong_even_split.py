import sys


def main() -> None:
    data = sys.stdin.read().split()
    n, k = int(data[0]), int(data[1])
    a = [int(x) for x in data[2:2 + n]]
    target = -(-sum(a) // k)  # ceil(total / k): each printer should get about this much
    blocks, load = [], 0
    for x in a:
        if load + x > target and load > 0 and len(blocks) < k - 1:
            blocks.append(load)
            load = 0
        load += x
    blocks.append(load)
    print(max(blocks))


main()
