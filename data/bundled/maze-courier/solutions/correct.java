import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        StringTokenizer st = new StringTokenizer(br.readLine());
        int n = Integer.parseInt(st.nextToken()), m = Integer.parseInt(st.nextToken());
        char[][] g = new char[n][];
        for (int i = 0; i < n; i++) g[i] = br.readLine().trim().toCharArray();
        int[] dist = new int[n * m];
        Arrays.fill(dist, -1);
        int[] queue = new int[n * m];
        int head = 0, tail = 0, target = -1;
        for (int r = 0; r < n; r++)
            for (int c = 0; c < m; c++) {
                if (g[r][c] == 'S') { dist[r * m + c] = 0; queue[tail++] = r * m + c; }
                if (g[r][c] == 'T') target = r * m + c;
            }
        int[] dr = {1, -1, 0, 0}, dc = {0, 0, 1, -1};
        while (head < tail) {
            int cur = queue[head++], r = cur / m, c = cur % m;
            for (int k = 0; k < 4; k++) {
                int nr = r + dr[k], nc = c + dc[k];
                if (nr < 0 || nc < 0 || nr >= n || nc >= m || g[nr][nc] == '#') continue;
                int nxt = nr * m + nc;
                if (dist[nxt] >= 0) continue;
                dist[nxt] = dist[cur] + 1;
                queue[tail++] = nxt;
            }
        }
        System.out.println(dist[target]);
    }
}
