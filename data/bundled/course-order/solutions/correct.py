import heapq
import sys


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n, m = int(data[0]), int(data[1])
    after = [[] for _ in range(n + 1)]
    indeg = [0] * (n + 1)
    for i in range(m):
        a, b = int(data[2 + 2 * i]), int(data[3 + 2 * i])
        after[a].append(b)
        indeg[b] += 1
    ready = [c for c in range(1, n + 1) if indeg[c] == 0]
    heapq.heapify(ready)  # always take the smallest course whose prerequisites are done
    order = []
    while ready:
        c = heapq.heappop(ready)
        order.append(c)
        for nxt in after[c]:
            indeg[nxt] -= 1
            if indeg[nxt] == 0:
                heapq.heappush(ready, nxt)
    print(" ".join(map(str, order)) if len(order) == n else -1)


main()
