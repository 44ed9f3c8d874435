"""Bundled sample data sets, loaded into the warehouse as Delta tables."""
