import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        StreamTokenizer st = new StreamTokenizer(new BufferedReader(new InputStreamReader(System.in)));
        st.nextToken();
        int n = (int) st.nval;
        TreeMap<Long, Integer> counts = new TreeMap<>();
        for (int i = 0; i < n; i++) {
            st.nextToken();
            counts.merge((long) st.nval, 1, Integer::sum);
        }
        long bestCode = 0;
        int best = 0;
        for (Map.Entry<Long, Integer> e : counts.entrySet())  // ascending codes
            if (e.getValue() > best) { best = e.getValue(); bestCode = e.getKey(); }
        System.out.println(bestCode + " " + best);
    }
}
