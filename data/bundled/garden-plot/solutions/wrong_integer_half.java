import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        int n = Integer.parseInt(br.readLine().trim());
        long[] x = new long[n], y = new long[n];
        for (int i = 0; i < n; i++) {
            StringTokenizer st = new StringTokenizer(br.readLine());
            x[i] = Long.parseLong(st.nextToken());
            y[i] = Long.parseLong(st.nextToken());
        }
        long twice = 0;
        for (int i = 0; i < n; i++) {
            int j = (i + 1) % n;
            twice += x[i] * y[j] - x[j] * y[i];
        }
        System.out.println(Math.abs(twice) / 2);
    }
}
