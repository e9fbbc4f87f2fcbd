import java.io.*;
import java.util.*;

public class Main {
    static int[] parent;

    static int find(int x) {
        while (parent[x] != x) {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        return x;
    }

    public static void main(String[] args) throws IOException {
        StreamTokenizer st = new StreamTokenizer(new BufferedReader(new InputStreamReader(System.in)));
        st.nextToken(); int n = (int) st.nval;
        st.nextToken(); int m = (int) st.nval;
        parent = new int[n + 1];
        for (int i = 0; i <= n; i++) parent[i] = i;
        int groups = n;
        for (int i = 0; i < m; i++) {
            st.nextToken(); int a = find((int) st.nval);
            st.nextToken(); int b = find((int) st.nval);
            if (a != b) { parent[a] = b; groups--; }
        }
        System.out.println(groups);
    }
}
