import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        int n = Integer.parseInt(br.readLine().trim());
        long[][] slots = new long[n][];
        for (int i = 0; i < n; i++) {
            StringTokenizer st = new StringTokenizer(br.readLine());
            slots[i] = new long[] {Long.parseLong(st.nextToken()), Long.parseLong(st.nextToken())};
        }
        // shortest slots first, keeping each one that fits with those already chosen
        Arrays.sort(slots, (a, b) -> Long.compare(a[1] - a[0], b[1] - b[0]));
        TreeMap<Long, Long> chosen = new TreeMap<>();
        int taken = 0;
        for (long[] sl : slots) {
            Map.Entry<Long, Long> before = chosen.floorEntry(sl[0]);
            Map.Entry<Long, Long> after = chosen.ceilingEntry(sl[0]);
            if (before != null && before.getValue() > sl[0]) continue;
            if (after != null && after.getKey() < sl[1]) continue;
            chosen.put(sl[0], sl[1]);
            taken++;
        }
        System.out.println(taken);
    }
}
