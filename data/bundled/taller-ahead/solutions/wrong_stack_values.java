import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        int n = Integer.parseInt(br.readLine().trim());
        StringTokenizer st = new StringTokenizer(br.readLine());
        long[] h = new long[n];
        for (int i = 0; i < n; i++) h[i] = Long.parseLong(st.nextToken());
        // scan from the right keeping a stack of candidates; answer is the stack top
        int[] answer = new int[n];
        ArrayDeque<Integer> stack = new ArrayDeque<>();
        for (int i = n - 1; i >= 0; i--) {
            while (!stack.isEmpty() && h[stack.peek()] < h[i]) stack.pop();
            answer[i] = stack.isEmpty() ? 0 : stack.peek() + 1;
            stack.push(i);
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) sb.append(answer[i]).append(i + 1 < n ? ' ' : '\n');
        System.out.print(sb);
    }
}
