import sys


def main() -> None:
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    h = list(map(int, data[1:n + 1]))
    answer = []
    for i in range(n):
        found = 0
        for j in range(i + 1, n):
            if h[j] > h[i]:
                found = j + 1
                break
        answer.append(found)
    print(" ".join(map(str, answer)))


main()
