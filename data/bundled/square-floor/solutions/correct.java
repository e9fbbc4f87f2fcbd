import java.io.*;

public class Solution {
    static long isqrt(long x) {
        long k = (long) Math.sqrt((double) x);
        // fix the floating-point estimate in both directions
        while (k > 0 && k * k > x) k--;
        while ((k + 1) * (k + 1) <= x) k++;
        return k;
    }

    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        int t = Integer.parseInt(br.readLine().trim());
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < t; i++) sb.append(isqrt(Long.parseLong(br.readLine().trim()))).append('\n');
        System.out.print(sb);
    }
}
