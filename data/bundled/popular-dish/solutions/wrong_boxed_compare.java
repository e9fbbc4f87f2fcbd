import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        int n = Integer.parseInt(br.readLine().trim());
        StringTokenizer st = new StringTokenizer(br.readLine());
        List<Integer> codes = new ArrayList<>();
        for (int i = 0; i < n; i++) codes.add(Integer.parseInt(st.nextToken()));
        Collections.sort(codes);
        Integer bestCode = codes.get(0);
        int best = 1, run = 1;
        for (int i = 1; i < n; i++) {
            run = codes.get(i) == codes.get(i - 1) ? run + 1 : 1;
            if (run > best) { best = run; bestCode = codes.get(i); }
        }
        System.out.println(bestCode + " " + best);
    }
}
