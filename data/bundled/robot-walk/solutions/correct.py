import sys

STEP = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}


def main() -> None:
    tokens = sys.stdin.read().split()
    n, m, r, c = (int(x) for x in tokens[:4])
    grid = tokens[4:4 + n]
    program = tokens[4 + n]
    r, c = r - 1, c - 1
    blocked = 0
    for cmd in program:
        dr, dc = STEP[cmd]
        nr, nc = r + dr, c + dc
        if 0 <= nr < n and 0 <= nc < m and grid[nr][nc] != "#":
            r, c = nr, nc
        else:
            blocked += 1
    print(r + 1, c + 1, blocked)


main()
