import sys


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    h = list(map(int, data[1:n + 1]))
    answer = [0] * n
    stack = []  # indices still waiting for a taller person, heights non-increasing
    for j in range(n):
        hj = h[j]
        while stack and h[stack[-1]] < hj:
            answer[stack.pop()] = j + 1
        stack.append(j)
    print(" ".join(map(str, answer)))


main()
