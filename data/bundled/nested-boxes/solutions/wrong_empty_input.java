import java.io.*;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        int n = Integer.parseInt(br.readLine().trim());
        String log = br.readLine().trim();
        char[] stack = new char[n + 1];
        int top = 0, best = 0;
        for (int i = 0; i < n; i++) {
            char ch = log.charAt(i);
            if (ch == '(' || ch == '[' || ch == '{') {
                stack[top++] = ch;
                best = Math.max(best, top);
                continue;
            }
            char want = ch == ')' ? '(' : ch == ']' ? '[' : '{';
            if (top == 0 || stack[top - 1] != want) { System.out.println(-1); return; }
            top--;
        }
        System.out.println(top == 0 ? best : -1);
    }
}
