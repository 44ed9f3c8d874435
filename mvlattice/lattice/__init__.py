"""The model format and its validation, the Lattice, TileSpec, HRU96 selection, the suggester."""
