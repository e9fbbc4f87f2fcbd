import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        int n = Integer.parseInt(br.readLine().trim());
        StringTokenizer st = new StringTokenizer(br.readLine());
        long prev = Long.parseLong(st.nextToken());
        int run = 1, best = 1;
        for (int i = 1; i < n; i++) {
            long h = Long.parseLong(st.nextToken());
            run = h > prev ? run + 1 : 1;
            best = Math.max(best, run);
            prev = h;
        }
        System.out.println(best);
    }
}
