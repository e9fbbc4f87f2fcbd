import java.io.*;

public class Main {
    public static void main(String[] args) throws IOException {
        StreamTokenizer st = new StreamTokenizer(new BufferedReader(new InputStreamReader(System.in)));
        st.nextToken();
        int n = (int) st.nval;
        long[] h = new long[n];
        for (int i = 0; i < n; i++) { st.nextToken(); h[i] = (long) st.nval; }
        int[] answer = new int[n], stack = new int[n];
        int top = 0;
        for (int j = 0; j < n; j++) {
            while (top > 0 && h[stack[top - 1]] < h[j]) answer[stack[--top]] = j + 1;
            stack[top++] = j;
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) sb.append(answer[i]).append(i + 1 < n ? ' ' : '\n');
        System.out.print(sb);
    }
}
