import java.util.*;

public class Main {
    public static void main(String[] args) {
        Scanner sc = new Scanner(System.in);
        int n = sc.nextInt(), cap = sc.nextInt();
        int[] best = new int[cap + 1];
        for (int i = 0; i < n; i++) {
            int w = sc.nextInt();
            int v = sc.nextInt();
            for (int c = cap; c >= w; c--) best[c] = Math.max(best[c], best[c - w] + v);
        }
        System.out.println(best[cap]);
    }
}
