import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        StreamTokenizer st = new StreamTokenizer(new BufferedReader(new InputStreamReader(System.in)));
        st.nextToken();
        int n = (int) st.nval;
        long[] slots = new long[n];
        for (int i = 0; i < n; i++) {
            st.nextToken(); long s = (long) st.nval;
            st.nextToken(); long e = (long) st.nval;
            slots[i] = e * 2_000_000_000L + s;  // sort by end, then start
        }
        Arrays.sort(slots);
        int taken = 0;
        long freeAt = -1;
        for (long v : slots) {
            long e = v / 2_000_000_000L, s = v % 2_000_000_000L;
            if (s >= freeAt) { taken++; freeAt = e; }
        }
        System.out.println(taken);
    }
}
