import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        StreamTokenizer st = new StreamTokenizer(new BufferedReader(new InputStreamReader(System.in)));
        st.nextToken();
        int n = (int) st.nval;
        long[] tails = new long[n];
        int len = 0;
        for (int i = 0; i < n; i++) {
            st.nextToken();
            long h = (long) st.nval;
            int lo = 0, hi = len;  // first index with tails[idx] >= h
            while (lo < hi) {
                int mid = (lo + hi) >>> 1;
                if (tails[mid] < h) lo = mid + 1; else hi = mid;
            }
            tails[lo] = h;
            if (lo == len) len++;
        }
        System.out.println(len);
    }
}
