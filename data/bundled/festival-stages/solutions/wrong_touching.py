import sys


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    slots = []
    for i in range(n):
        s, e = int(data[1 + 2 * i]), int(data[2 + 2 * i])
        slots.append((e, s))
    slots.sort()
    taken, last_end = 0, -1
    for end, start in slots:
        if start > last_end:
            taken += 1
            last_end = end
    print(taken)


main()
