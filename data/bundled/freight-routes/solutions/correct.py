import heapq
import sys


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n, m = int(data[0]), int(data[1])
    adj = [[] for _ in range(n + 1)]
    for i in range(m):
        u, v, w = int(data[2 + 3 * i]), int(data[3 + 3 * i]), int(data[4 + 3 * i])
        adj[u].append((v, w))
        adj[v].append((u, w))
    dist = [-1] * (n + 1)
    heap = [(0, 1)]
    while heap:
        d, u = heapq.heappop(heap)
        if dist[u] >= 0:
            continue
        dist[u] = d
        if u == n:
            break
        for v, w in adj[u]:
            if dist[v] < 0:
                heapq.heappush(heap, (d + w, v))
    print(dist[n])


main()
