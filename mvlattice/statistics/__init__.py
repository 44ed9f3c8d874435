"""Row counts and distinct counts of lattice column sets: providers, profiler, cache, estimates."""
