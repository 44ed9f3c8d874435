"""The lattice suggester: lattices and weighted tiles from a log of past queries."""
