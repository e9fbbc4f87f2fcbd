"""The process engine: the runner under bubblewrap on the host (see engine.py)."""
