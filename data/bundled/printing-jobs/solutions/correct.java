import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        StreamTokenizer st = new StreamTokenizer(new BufferedReader(new InputStreamReader(System.in)));
        st.nextToken(); int n = (int) st.nval;
        st.nextToken(); int k = (int) st.nval;
        long[] a = new long[n];
        long lo = 0, hi = 0;
        for (int i = 0; i < n; i++) {
            st.nextToken();
            a[i] = (long) st.nval;
            lo = Math.max(lo, a[i]);
            hi += a[i];
        }
        while (lo < hi) {
            long mid = lo + (hi - lo) / 2;
            int blocks = 1;
            long load = 0;
            for (long x : a) {
                if (load + x > mid) { blocks++; load = 0; }
                load += x;
            }
            if (blocks <= k) hi = mid; else lo = mid + 1;
        }
        System.out.println(lo);
    }
}
