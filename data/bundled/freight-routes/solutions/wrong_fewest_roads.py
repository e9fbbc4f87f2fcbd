import sys
from collections import deque


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n, m = int(data[0]), int(data[1])
    adj = [[] for _ in range(n + 1)]
    for i in range(m):
        u, v, w = int(data[2 + 3 * i]), int(data[3 + 3 * i]), int(data[4 + 3 * i])
        adj[u].append((v, w))
        adj[v].append((u, w))
    # BFS: the route with the fewest roads, assumed to be the cheapest
    cost = [-1] * (n + 1)
    cost[1] = 0
    queue = deque([1])
    while queue:
        u = queue.popleft()
        for v, w in sorted(adj[u], key=lambda e: e[1]):
            if cost[v] < 0:
                cost[v] = cost[u] + w
                queue.append(v)
    print(cost[n])


main()
