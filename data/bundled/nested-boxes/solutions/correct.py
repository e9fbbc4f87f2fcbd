import sys

OPENER = {")": "(", "]": "[", "}": "{"}


def depth(log: str) -> int:
    stack = []
    best = 0
    for ch in log:
        if ch in OPENER:
            if not stack or stack.pop() != OPENER[ch]:
                return -1
        else:
            stack.append(ch)
            best = max(best, len(stack))
    return -1 if stack else best


def main() -> None:
    tokens = sys.stdin.read().split()
    n = int(tokens[0])
    log = tokens[1] if n > 0 else ""
    print(depth(log))


main()
