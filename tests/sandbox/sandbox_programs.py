"""Known-verdict programs shared by the sandbox tests (each prints a+b of its input when correct)."""

from __future__ import annotations

from sandbox import TestCase

ADD_TESTS = [TestCase(input="1 2\n", output="3\n"), TestCase(input="10 -4\n", output="6\n")]

PROGRAMS: dict[str, dict[str, str]] = {
    "python": {
        "AC": "a, b = map(int, input().split())\nprint(a + b)\n",
        "WA": "a, b = map(int, input().split())\nprint(a - b)\n",
        "TLE": "while True:\n    pass\n",
        "MLE": "x = bytearray(1 << 30)\nprint(len(x))\n",
        "RE": "raise ValueError('boom')\n",
        "CE": "def broken(:\n    pass\n",
        "OLE": "import sys\nwhile True:\n    sys.stdout.write('y' * 65536)\n",
    },
    "cpp": {
        "AC": '#include <bits/stdc++.h>\nint main(){long long a,b;std::cin>>a>>b;std::cout<<a+b<<"\\n";}\n',
        "WA": '#include <iostream>\nint main(){long long a,b;std::cin>>a>>b;std::cout<<a*b<<"\\n";}\n',
        "TLE": "int main(){volatile unsigned long long x=0;for(;;)x++;}\n",
        "MLE": '#include <vector>\n#include <cstdio>\nint main(){std::vector<char> v(1ull<<30, 1);printf("%d", v[12345]);}\n',
        "RE": "#include <cstdlib>\nint main(){volatile int *p = nullptr; return *p;}\n",
        "CE": "int main(){ this is not c++ }\n",
        "OLE": '#include <cstdio>\nint main(){for(;;)fputs("yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy", stdout);}\n',
    },
    "java": {
        "AC": "import java.util.*;\npublic class Main{public static void main(String[] a){Scanner s=new Scanner(System.in);"
        "System.out.println(s.nextLong()+s.nextLong());}}\n",
        "WA": "import java.util.*;\npublic class Main{public static void main(String[] a){Scanner s=new Scanner(System.in);"
        "System.out.println(s.nextLong()*5);}}\n",
        "TLE": "public class Main{public static void main(String[] a){long x=0;while(true){x++;}}}\n",
        "MLE": "import java.util.*;\npublic class Main{public static void main(String[] a){List<long[]> l=new ArrayList<>();"
        "while(true){l.add(new long[1<<20]);}}}\n",
        "RE": "public class Main{public static void main(String[] a){int[] x=new int[1];System.out.println(x[5]);}}\n",
        "CE": 'public class Main{public static void main(String[] a){ int x = "no"; }}\n',
        "OLE": "public class Main{public static void main(String[] a){StringBuilder b=new StringBuilder();"
        "for(int i=0;i<4096;i++)b.append('y');String s=b.toString();while(true){System.out.print(s);}}}\n",
    },
}

CASES = [(lang, verdict) for lang, progs in PROGRAMS.items() for verdict in progs]
