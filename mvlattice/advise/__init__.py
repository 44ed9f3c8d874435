"""Miss analytics over the query log: `advise` (see advisor)."""
