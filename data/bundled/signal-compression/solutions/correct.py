import sys
from itertools import groupby


def main() -> None:
    s = sys.stdin.readline().strip()
    print("".join(f"{ch}{sum(1 for _ in run)}" for ch, run in groupby(s)))


main()
