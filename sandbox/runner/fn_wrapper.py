"""Function-mode harness: run the candidate, then the test code in the same namespace.

argv: CANDIDATE_FILE TEST_FILE TOKEN_FD; the pipe TOKEN_FD carries a random token. The token is printed on
stdout only after the test code ran to its end, so a candidate that exits early
(exit(0), sys.exit, os._exit) does not pass. Not a boundary against code that
deliberately introspects this harness; it catches early exits, which is its job.
"""

import os
import sys


def _main() -> None:
    cand_path, test_path, token_fd = sys.argv[1], sys.argv[2], int(sys.argv[3])
    token = os.read(token_fd, 256)
    os.close(token_fd)
    with open(cand_path, encoding="utf-8", errors="surrogatepass") as f:
        cand = f.read()
    with open(test_path, encoding="utf-8", errors="surrogatepass") as f:
        test = f.read()
    sys.argv = [cand_path]
    namespace = {"__name__": "__candidate__", "__builtins__": __builtins__}
    exec(compile(cand, "solution.py", "exec", dont_inherit=True), namespace)  # noqa: S102 - its job
    exec(compile(test, "test.py", "exec", dont_inherit=True), namespace)  # noqa: S102
    sys.stdout.flush()
    os.write(1, b"\n" + token + b"\n")


_main()
