import sys


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n, cap = int(data[0]), int(data[1])
    best = [0] * (cap + 1)  # best[c] = max usefulness with total weight <= c
    for i in range(n):
        w, v = int(data[2 + 2 * i]), int(data[3 + 2 * i])
        if w > cap:
            continue
        # taking item i: best[c - w] + v, computed from the previous row (slices copy)
        shifted = [x + v for x in best[: cap + 1 - w]]
        best[w:] = [a if a >= b else b for a, b in zip(best[w:], shifted)]
    print(best[cap])


main()
