"""Candidate generation: policy pools behind one narrow backend interface, plus references and mutants."""
