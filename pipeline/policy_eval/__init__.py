"""Evaluating code policies on a held-out split (MBPP test): pass@k and the diagnostics beyond it.

sample k completions per problem (the sampling backends) -> judge each in the sandbox ->
pass@1 / pass@k with intervals, generation length, Ruff profile by severity, error types ->
report.json, report.md, plots, a per-sample and a per-problem table. `compare` puts
several reports side by side with paired differences.
"""
