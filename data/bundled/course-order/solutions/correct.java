import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        StreamTokenizer st = new StreamTokenizer(new BufferedReader(new InputStreamReader(System.in)));
        st.nextToken(); int n = (int) st.nval;
        st.nextToken(); int m = (int) st.nval;
        int[] head = new int[n + 1], next = new int[m], to = new int[m], indeg = new int[n + 1];
        Arrays.fill(head, -1);
        for (int i = 0; i < m; i++) {
            st.nextToken(); int a = (int) st.nval;
            st.nextToken(); int b = (int) st.nval;
            to[i] = b; next[i] = head[a]; head[a] = i; indeg[b]++;
        }
        PriorityQueue<Integer> ready = new PriorityQueue<>();
        for (int c = 1; c <= n; c++) if (indeg[c] == 0) ready.add(c);
        StringBuilder sb = new StringBuilder();
        int taken = 0;
        while (!ready.isEmpty()) {
            int c = ready.poll();
            sb.append(taken++ == 0 ? "" : " ").append(c);
            for (int e = head[c]; e >= 0; e = next[e]) if (--indeg[to[e]] == 0) ready.add(to[e]);
        }
        System.out.println(taken == n ? sb.toString() : "-1");
    }
}
