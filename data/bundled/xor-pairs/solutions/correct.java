import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        StreamTokenizer st = new StreamTokenizer(new BufferedReader(new InputStreamReader(System.in)));
        st.nextToken(); int n = (int) st.nval;
        st.nextToken(); int k = (int) st.nval;
        HashMap<Integer, Integer> seen = new HashMap<>();
        long pairs = 0;
        for (int i = 0; i < n; i++) {
            st.nextToken();
            int a = (int) st.nval;
            pairs += seen.getOrDefault(a ^ k, 0);
            seen.merge(a, 1, Integer::sum);
        }
        System.out.println(pairs);
    }
}
