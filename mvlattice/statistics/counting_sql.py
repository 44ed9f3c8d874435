"""The SQL that counts column sets over a lattice's star (text only; Spark runs it elsewhere).

NULL is a value of its own, as GROUP BY treats it. Spark's `count(DISTINCT a, b)` skips every
row with a NULL in a or b, and sketches skip NULL inputs, so neither is used as is:

- **exact**: every row becomes one narrow row per set, `(set id, its columns as strings)`,
  and a GROUP BY over those counts the combinations — grouping is GROUP BY itself, so NULL
  groups like any value. On FoodMart (64 sets) this measured 2.4× faster than as many
  `count(DISTINCT struct(a, b))` in one aggregate, whose expanded rows carry a struct column per
  set, and faster than GROUP BY … GROUPING SETS, whose expanded rows carry every column.
- **sketch**: each column becomes a 64-bit hash `xxhash64(a, isnull(a))` (Spark's hash skips a
  NULL argument, so the NULL flag keeps NULL apart from every value); the profiler combines a
  set's column hashes into one 64-bit hash per row and sketches it outside Spark
  (`statistics.sketch`, `statistics.hll`). Two different combinations share a hash with
  probability ~n²/2⁶⁵ (≈ 3·10⁻⁶ for n = 10⁷), far below the sketch's own error.

Every statement also returns the star's `count(*)` as `rows`: a pass yields the row count too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mvlattice.sql.quote import identifier as quote

ROWS = "rows"


def exact_select(
    source: str, columns: Sequence[str], sets: Sequence[Sequence[str]], keys: Mapping[str, str]
) -> str:
    """One aggregate over `source` counting every set exactly.

    Each row is turned into one narrow row per set — `(sid, k0, k1, …)`, the set's columns as
    their key strings (`keys[column]`, see `key_expression`), NULL-padded — by `stack`; then
    GROUP BY sid, k0, k1, … (NULL groups like any value) and count the groups per sid. Returns
    one row per set that has rows: `sid` (its index in `sets`), `n` (distinct combinations)
    and `rows` (count(*) of the star, the same on every row).
    """
    index = {c: i for i, c in enumerate(columns)}
    width = max(len(s) for s in sets)
    pad = "CAST(NULL AS STRING)"
    parts = [
        ", ".join(
            [str(sid)] + [quote(key_alias(index[c])) for c in cols] + [pad] * (width - len(cols))
        )
        for sid, cols in enumerate(sets)
    ]
    slots = ", ".join(f"k{i}" for i in range(width))
    keyed = ", ".join(f"{keys[c]} AS {quote(key_alias(i))}" for i, c in enumerate(columns))
    return (
        f"SELECT sid, count(*) AS n, sum(c) AS {quote(ROWS)}\n"
        f"FROM (SELECT sid, {slots}, count(*) AS c\n"
        f"      FROM (SELECT stack({len(sets)}, {', '.join(parts)}) AS (sid, {slots})\n"
        f"            FROM (SELECT {keyed} FROM {source}) AS keyed) AS expanded\n"
        f"      GROUP BY sid, {slots}) AS groups\n"
        "GROUP BY sid"
    )


def key_alias(i: int) -> str:
    return f"s{i}"


def key_expression(column: str, type_name: str) -> str:
    """A column as a string that is equal exactly when the values are (NULL stays NULL)."""
    name = quote(column)
    if type_name == "string":
        return name
    if type_name == "binary":
        return f"hex({name})"
    if type_name.startswith(("array", "map", "struct")):
        return f"to_json({name})"
    return f"CAST({name} AS STRING)"


def column_hashes(source: str, columns: Sequence[str]) -> str:
    """Per-column NULL-aware 64-bit hashes `h0, h1, …` of `source`, in the order given."""
    items = [
        f"xxhash64({quote(c)}, isnull({quote(c)})) AS {quote(hash_alias(i))}"
        for i, c in enumerate(columns)
    ]
    return "SELECT " + ", ".join(items or [f"0 AS {quote('h')}"]) + f"\nFROM {source}"


def hash_alias(i: int) -> str:
    return f"h{i}"
