import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        StringTokenizer st = new StringTokenizer(br.readLine());
        int n = Integer.parseInt(st.nextToken());
        long target = Long.parseLong(st.nextToken());
        long[] a = new long[n + 1];
        HashMap<Long, Integer> where = new HashMap<>();
        st = new StringTokenizer(br.readLine());
        for (int i = 1; i <= n; i++) {
            a[i] = Long.parseLong(st.nextToken());
            where.put(a[i], i);
        }
        for (int i = 1; i <= n; i++) {
            Integer j = where.get(target - a[i]);
            if (j != null) {
                System.out.println(Math.min(i, j) + " " + Math.max(i, j));
                return;
            }
        }
        System.out.println(-1);
    }
}
