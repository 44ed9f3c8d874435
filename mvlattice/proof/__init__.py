"""Evidence that rewriting is correct: seeded random queries over a star, run on Spark both
as written and as rewritten, compared as multisets (the differential tester)."""
