"""Building and refreshing tiles as Delta tables, the tile catalog, the scheduler."""
