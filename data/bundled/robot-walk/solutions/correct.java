import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        StringTokenizer st = new StringTokenizer(br.readLine());
        int n = Integer.parseInt(st.nextToken()), m = Integer.parseInt(st.nextToken());
        int r = Integer.parseInt(st.nextToken()) - 1, c = Integer.parseInt(st.nextToken()) - 1;
        char[][] grid = new char[n][];
        for (int i = 0; i < n; i++) grid[i] = br.readLine().trim().toCharArray();
        String program = br.readLine().trim();
        int blocked = 0;
        for (int i = 0; i < program.length(); i++) {
            char cmd = program.charAt(i);
            int nr = r, nc = c;
            if (cmd == 'U') nr--; else if (cmd == 'D') nr++; else if (cmd == 'L') nc--; else nc++;
            if (nr >= 0 && nr < n && nc >= 0 && nc < m && grid[nr][nc] != '#') { r = nr; c = nc; }
            else blocked++;
        }
        System.out.println((r + 1) + " " + (c + 1) + " " + blocked);
    }
}
