import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        StringTokenizer st = new StringTokenizer(br.readLine());
        int n = Integer.parseInt(st.nextToken()), k = Integer.parseInt(st.nextToken());
        int[] a = new int[n];
        st = new StringTokenizer(br.readLine());
        for (int i = 0; i < n; i++) a[i] = Integer.parseInt(st.nextToken());
        HashMap<Integer, Integer> count = new HashMap<>();
        int left = 0, best = 0;
        for (int right = 0; right < n; right++) {
            count.put(a[right], count.getOrDefault(a[right], 0) + 1);
            while (count.size() > k && left < right) {
                count.put(a[left], count.get(a[left]) - 1);
                left++;
            }
            best = Math.max(best, right - left + 1);
        }
        System.out.println(best);
    }
}
