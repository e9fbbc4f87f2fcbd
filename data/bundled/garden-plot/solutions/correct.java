import java.io.*;
import java.math.BigInteger;
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
        // each term fits in a long (|x*y| <= 1e16); the running sum may not, so use BigInteger
        BigInteger twice = BigInteger.ZERO;
        for (int i = 0; i < n; i++) {
            int j = (i + 1) % n;
            twice = twice.add(BigInteger.valueOf(x[i] * y[j] - x[j] * y[i]));
        }
        twice = twice.abs();
        BigInteger[] qr = twice.divideAndRemainder(BigInteger.TWO);
        System.out.println(qr[0] + (qr[1].signum() == 0 ? ".0" : ".5"));
    }
}
