import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        StringTokenizer st = new StringTokenizer(br.readLine());
        int n = Integer.parseInt(st.nextToken()), k = Integer.parseInt(st.nextToken());
        long[] a = new long[n];
        long hi = 0;
        st = new StringTokenizer(br.readLine());
        for (int i = 0; i < n; i++) { a[i] = Long.parseLong(st.nextToken()); hi += a[i]; }
        long lo = 1;
        while (lo < hi) {
            long mid = (lo + hi) / 2;
            int blocks = 1;
            long load = 0;
            for (long x : a) {
                if (load + x > mid) { blocks++; load = x; }
                else load += x;
            }
            if (blocks <= k) hi = mid; else lo = mid + 1;
        }
        System.out.println(lo);
    }
}
