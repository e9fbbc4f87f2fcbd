import java.util.*;

public class Main {
    public static void main(String[] args) {
        final long MOD = 1_000_000_007L;
        Scanner sc = new Scanner(System.in);
        int n = sc.nextInt(), x = sc.nextInt();
        long[] ways = new long[x + 1];
        ways[0] = 1;
        for (int i = 0; i < n; i++) {
            int c = sc.nextInt();
            for (int t = x; t >= c; t--) ways[t] = (ways[t] + ways[t - c]) % MOD;
        }
        System.out.println(ways[x]);
    }
}
