import sys


def main() -> None:
    tokens = sys.stdin.read().split()
    n = int(tokens[0])
    log = tokens[1] if n > 0 else ""
    open_now, best = 0, 0
    for ch in log:
        if ch in "([{":
            open_now += 1
            best = max(best, open_now)
        else:
            open_now -= 1
            if open_now < 0:
                print(-1)
                return
    print(best if open_now == 0 else -1)


main()
