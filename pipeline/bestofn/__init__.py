"""Best-of-N: a code policy's N samples per problem, a verifier picks one, the sandbox judges it.

samples (a policy evaluation's samples.parquet, or any JSONL of programs) + problems with tests
-> every distinct program judged once (the judge interface) -> the verifier's pick per problem
(`list`: all N in one prompt; `pairwise`: every pair in both orders, most wins; `knockout`:
lists of at most 5, winners on to the next round; the 0-10 scoring variant; K votes) ->
report.json / report.md / a plot of accuracy against N: the pick's pass@1 beside random pick
(= pass@1), oracle (pass@N) and verifier-free baselines (majority by output on the tests'
inputs, shortest program, highest mean log-probability), with bootstrap intervals, per language.

The behaviour follows Aletheia's `src/bon_livecodebench.py`; docs/best-of-n.md has the commands.
"""
