"""Run at image build time (stdlib only): each language's own step (languages/: C++ precompiles
bits/stdc++.h with exactly the runner's flags; Java dumps javac's class-data archive)."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import languages  # after the path is set

if __name__ == "__main__":
    for language in languages.load().values():
        language.prepare_image()
