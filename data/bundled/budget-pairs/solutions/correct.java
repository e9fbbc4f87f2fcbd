import java.io.*;
import java.util.*;

public class Main {
    // A buffered token reader, declared before main() as many Java solutions do.
    static final class FastReader {
        private final DataInputStream in = new DataInputStream(new BufferedInputStream(System.in, 1 << 16));

        long nextLong() throws IOException {
            int c = in.read();
            while (c != '-' && (c < '0' || c > '9')) c = in.read();
            boolean neg = c == '-';
            if (neg) c = in.read();
            long r = 0;
            while (c >= '0' && c <= '9') { r = r * 10 + (c - '0'); c = in.read(); }
            return neg ? -r : r;
        }
    }

    public static void main(String[] args) throws IOException {
        FastReader reader = new FastReader();
        int n = (int) reader.nextLong();
        long k = reader.nextLong();
        long[] a = new long[n];
        for (int i = 0; i < n; i++) a[i] = reader.nextLong();
        Arrays.sort(a);
        long count = 0;
        int lo = 0, hi = n - 1;
        while (lo < hi) {
            if (a[lo] + a[hi] <= k) { count += hi - lo; lo++; }
            else hi--;
        }
        System.out.println(count);
    }
}
