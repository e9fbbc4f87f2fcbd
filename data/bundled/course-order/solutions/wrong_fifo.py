import sys
from collections import deque


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n, m = int(data[0]), int(data[1])
    after = [[] for _ in range(n + 1)]
    indeg = [0] * (n + 1)
    for i in range(m):
        a, b = int(data[2 + 2 * i]), int(data[3 + 2 * i])
        after[a].append(b)
        indeg[b] += 1
    ready = deque(c for c in range(1, n + 1) if indeg[c] == 0)
    order = []
    while ready:
        c = ready.popleft()
        order.append(c)
        for nxt in sorted(after[c]):
            indeg[nxt] -= 1
            if indeg[nxt] == 0:
                ready.append(nxt)
    print(" ".join(map(str, order)) if len(order) == n else -1)


main()
