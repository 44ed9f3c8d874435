"""SQL to relational IR, SPJG blocks, view matching and compensation, SQL generation."""
