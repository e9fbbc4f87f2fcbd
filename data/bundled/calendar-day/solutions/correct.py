import datetime
import sys

NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def main() -> None:
    data = sys.stdin.read().split()
    t = int(data[0])
    out = []
    for i in range(t):
        y, m, d = int(data[1 + 3 * i]), int(data[2 + 3 * i]), int(data[3 + 3 * i])
        out.append(NAMES[datetime.date(y, m, d).weekday()])  # proleptic Gregorian
    print("\n".join(out))


main()
