import math
import sys


def main() -> None:
    data = sys.stdin.buffer.read().split()
    t = int(data[0])
    print("\n".join(str(math.isqrt(int(x))) for x in data[1:t + 1]))


main()
