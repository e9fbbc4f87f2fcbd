import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        int n = Integer.parseInt(br.readLine().trim());
        String[] names = new String[n];
        long[] scores = new long[n];
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            StringTokenizer st = new StringTokenizer(br.readLine());
            names[i] = st.nextToken();
            scores[i] = Long.parseLong(st.nextToken());
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> scores[a] != scores[b] ? Long.compare(scores[b], scores[a]) : names[a].compareTo(names[b]));
        StringBuilder sb = new StringBuilder();
        for (int i : order) sb.append(names[i]).append('\n');
        System.out.print(sb);
    }
}
