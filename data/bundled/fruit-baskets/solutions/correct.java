import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        StreamTokenizer st = new StreamTokenizer(new BufferedReader(new InputStreamReader(System.in)));
        st.nextToken(); int n = (int) st.nval;
        st.nextToken(); int k = (int) st.nval;
        int[] a = new int[n];
        for (int i = 0; i < n; i++) { st.nextToken(); a[i] = (int) st.nval; }
        HashMap<Integer, Integer> count = new HashMap<>();
        int left = 0, best = 0;
        for (int right = 0; right < n; right++) {
            count.merge(a[right], 1, Integer::sum);
            while (count.size() > k) {
                int c = count.get(a[left]) - 1;
                if (c == 0) count.remove(a[left]); else count.put(a[left], c);
                left++;
            }
            best = Math.max(best, right - left + 1);
        }
        System.out.println(best);
    }
}
