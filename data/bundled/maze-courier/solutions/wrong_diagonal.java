import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        StringTokenizer st = new StringTokenizer(br.readLine());
        int n = Integer.parseInt(st.nextToken()), m = Integer.parseInt(st.nextToken());
        char[][] g = new char[n][];
        for (int i = 0; i < n; i++) g[i] = br.readLine().trim().toCharArray();
        int[][] dist = new int[n][m];
        for (int[] row : dist) Arrays.fill(row, -1);
        ArrayDeque<int[]> q = new ArrayDeque<>();
        int tr = 0, tc = 0;
        for (int r = 0; r < n; r++)
            for (int c = 0; c < m; c++) {
                if (g[r][c] == 'S') { dist[r][c] = 0; q.add(new int[] {r, c}); }
                if (g[r][c] == 'T') { tr = r; tc = c; }
            }
        while (!q.isEmpty()) {
            int[] cur = q.poll();
            for (int dr = -1; dr <= 1; dr++)
                for (int dc = -1; dc <= 1; dc++) {
                    int nr = cur[0] + dr, nc = cur[1] + dc;
                    if (nr < 0 || nc < 0 || nr >= n || nc >= m || g[nr][nc] == '#' || dist[nr][nc] >= 0) continue;
                    dist[nr][nc] = dist[cur[0]][cur[1]] + 1;
                    q.add(new int[] {nr, nc});
                }
        }
        System.out.println(dist[tr][tc]);
    }
}
