"""Strategies for fuzzing mvlattice's inputs (SQL for the rewriter), shared by the unit tests
and bench/fuzz.py."""
