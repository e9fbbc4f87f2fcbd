import java.io.*;

public class Main {
    static final long MOD = 1_000_000_007L;

    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        int t = Integer.parseInt(br.readLine().trim());
        StringBuilder sb = new StringBuilder();
        for (int q = 0; q < t; q++) {
            long n = Long.parseLong(br.readLine().trim());
            long a = 0, b = 1;  // F(k), F(k+1) for k = prefix of n's bits
            for (int bit = 62; bit >= 0; bit--) {
                long c = a * (((2 * b - a) % MOD + MOD) % MOD) % MOD;
                long d = (a * a + b * b) % MOD;
                if (((n >> bit) & 1) == 1) { a = d; b = (c + d) % MOD; }
                else { a = c; b = d; }
            }
            sb.append(a).append('\n');
        }
        System.out.print(sb);
    }
}
