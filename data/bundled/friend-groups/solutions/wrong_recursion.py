import sys


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n, m = int(data[0]), int(data[1])
    adj = [[] for _ in range(n + 1)]
    for i in range(m):
        a, b = int(data[2 + 2 * i]), int(data[3 + 2 * i])
        adj[a].append(b)
        adj[b].append(a)
    seen = [False] * (n + 1)

    def visit(u: int) -> None:
        seen[u] = True
        for v in adj[u]:
            if not seen[v]:
                visit(v)

    groups = 0
    for u in range(1, n + 1):
        if not seen[u]:
            groups += 1
            visit(u)
    print(groups)


main()
