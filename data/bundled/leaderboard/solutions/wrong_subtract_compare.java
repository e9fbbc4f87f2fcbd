import java.io.*;
import java.util.*;

public class Main {
    static class Row {
        String name;
        int score;
        Row(String name, int score) { this.name = name; this.score = score; }
    }

    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        int n = Integer.parseInt(br.readLine().trim());
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            StringTokenizer st = new StringTokenizer(br.readLine());
            rows.add(new Row(st.nextToken(), Integer.parseInt(st.nextToken())));
        }
        rows.sort((a, b) -> a.score != b.score ? b.score - a.score : a.name.compareTo(b.name));
        StringBuilder sb = new StringBuilder();
        for (Row r : rows) sb.append(r.name).append('\n');
        System.out.print(sb);
    }
}
