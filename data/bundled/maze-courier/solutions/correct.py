import sys
from collections import deque


def main() -> None:
    lines = sys.stdin.read().split()
    n, m = int(lines[0]), int(lines[1])
    grid = "".join(lines[2:2 + n])
    start, target = grid.index("S"), grid.index("T")
    dist = [-1] * (n * m)
    dist[start] = 0
    queue = deque([start])
    while queue:
        cur = queue.popleft()
        if cur == target:
            break
        r, c = divmod(cur, m)
        d = dist[cur] + 1
        for nxt, ok in ((cur - m, r > 0), (cur + m, r < n - 1), (cur - 1, c > 0), (cur + 1, c < m - 1)):
            if ok and dist[nxt] < 0 and grid[nxt] != "#":
                dist[nxt] = d
                queue.append(nxt)
    print(dist[target])


main()
