import java.io.*;
import java.util.*;

public class Main {
    static DataInputStream in = new DataInputStream(new BufferedInputStream(System.in, 1 << 16));

    static long nextLong() throws IOException {
        int c = in.read();
        while (c != '-' && (c < '0' || c > '9')) c = in.read();
        boolean neg = c == '-';
        if (neg) c = in.read();
        long r = 0;
        while (c >= '0' && c <= '9') { r = r * 10 + (c - '0'); c = in.read(); }
        return neg ? -r : r;
    }

    public static void main(String[] args) throws IOException {
        int n = (int) nextLong(), m = (int) nextLong();
        int[] head = new int[n + 1], next = new int[2 * m], to = new int[2 * m];
        long[] weight = new long[2 * m];
        Arrays.fill(head, -1);
        for (int i = 0; i < m; i++) {
            int u = (int) nextLong(), v = (int) nextLong();
            long w = nextLong();
            to[2 * i] = v; weight[2 * i] = w; next[2 * i] = head[u]; head[u] = 2 * i;
            to[2 * i + 1] = u; weight[2 * i + 1] = w; next[2 * i + 1] = head[v]; head[v] = 2 * i + 1;
        }
        long[] dist = new long[n + 1];
        Arrays.fill(dist, -1);
        PriorityQueue<long[]> pq = new PriorityQueue<>((a, b) -> Long.compare(a[0], b[0]));
        pq.add(new long[] {0, 1});
        while (!pq.isEmpty()) {
            long[] top = pq.poll();
            int u = (int) top[1];
            if (dist[u] >= 0) continue;
            dist[u] = top[0];
            for (int e = head[u]; e >= 0; e = next[e])
                if (dist[to[e]] < 0) pq.add(new long[] {top[0] + weight[e], to[e]});
        }
        System.out.println(dist[n]);
    }
}
