"""What client SQL may do: the service's query sandbox. A query runs only when Spark's analyzed
plan reads the model's tables, tiles and materializations with plain relational operators and
safe built-in functions (`policy`), and it runs bounded in time and rows (`execution`)."""
