import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        StreamTokenizer st = new StreamTokenizer(new BufferedReader(new InputStreamReader(System.in)));
        st.nextToken(); int n = (int) st.nval;
        st.nextToken(); long target = (long) st.nval;
        HashMap<Long, Integer> seen = new HashMap<>();
        for (int j = 1; j <= n; j++) {
            st.nextToken();
            long cost = (long) st.nval;
            Integer i = seen.get(target - cost);
            if (i != null) {
                System.out.println(i + " " + j);
                return;
            }
            seen.putIfAbsent(cost, j);
        }
        System.out.println(-1);
    }
}
