import sys


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    slots = sorted(zip(map(int, data[2:2 + 2 * n:2]), map(int, data[1:1 + 2 * n:2])))
    # slots are (end, start): the earliest-finishing band never hurts
    taken, free_at = 0, -1
    for end, start in slots:
        if start >= free_at:
            taken += 1
            free_at = end
    print(taken)


main()
