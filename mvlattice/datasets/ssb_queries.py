"""The 13 queries of the Star Schema Benchmark, as the specification writes them (flights 1-4).

Tables are unqualified (`lineorder`, `date`, …): the SSB model's defaultSchema is `ssb`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mvlattice.plan.workload import workload_from_sql

if TYPE_CHECKING:
    from mvlattice.lattice.lattice import Lattice
    from mvlattice.plan.workload import Workload

_FLIGHT_1 = """select sum(lo_extendedprice*lo_discount) as revenue
from lineorder, date
where lo_orderdate = d_datekey
and {date}
and lo_discount between {d_lo} and {d_hi}
and {quantity}"""

_FLIGHT_2 = """select sum(lo_revenue), d_year, p_brand1
from lineorder, date, part, supplier
where lo_orderdate = d_datekey
and lo_partkey = p_partkey
and lo_suppkey = s_suppkey
and {part}
and s_region = '{region}'
group by d_year, p_brand1
order by d_year, p_brand1"""

_FLIGHT_3 = """select {c}, {s}, d_year, sum(lo_revenue) as revenue
from customer, lineorder, supplier, date
where lo_custkey = c_custkey
and lo_suppkey = s_suppkey
and lo_orderdate = d_datekey
and {where}
group by {c}, {s}, d_year
order by d_year asc, revenue desc"""

_CITIES = (
    "(c_city='UNITED KI1' or c_city='UNITED KI5') and (s_city='UNITED KI1' or s_city='UNITED KI5')"
)

QUERIES: tuple[tuple[str, str], ...] = (
    ("Q1.1", _FLIGHT_1.format(date="d_year = 1993", d_lo=1, d_hi=3, quantity="lo_quantity < 25")),
    (
        "Q1.2",
        _FLIGHT_1.format(
            date="d_yearmonthnum = 199401", d_lo=4, d_hi=6, quantity="lo_quantity between 26 and 35"
        ),
    ),
    (
        "Q1.3",
        _FLIGHT_1.format(
            date="d_weeknuminyear = 6 and d_year = 1994",
            d_lo=5,
            d_hi=7,
            quantity="lo_quantity between 26 and 35",
        ),
    ),
    ("Q2.1", _FLIGHT_2.format(part="p_category = 'MFGR#12'", region="AMERICA")),
    ("Q2.2", _FLIGHT_2.format(part="p_brand1 between 'MFGR#2221' and 'MFGR#2228'", region="ASIA")),
    ("Q2.3", _FLIGHT_2.format(part="p_brand1 = 'MFGR#2239'", region="EUROPE")),
    (
        "Q3.1",
        _FLIGHT_3.format(
            c="c_nation",
            s="s_nation",
            where="c_region = 'ASIA' and s_region = 'ASIA' and d_year >= 1992 and d_year <= 1997",
        ),
    ),
    (
        "Q3.2",
        _FLIGHT_3.format(
            c="c_city",
            s="s_city",
            where="c_nation = 'UNITED STATES' and s_nation = 'UNITED STATES' "
            "and d_year >= 1992 and d_year <= 1997",
        ),
    ),
    (
        "Q3.3",
        _FLIGHT_3.format(
            c="c_city", s="s_city", where=_CITIES + " and d_year >= 1992 and d_year <= 1997"
        ),
    ),
    (
        "Q3.4",
        _FLIGHT_3.format(c="c_city", s="s_city", where=_CITIES + " and d_yearmonth = 'Dec1997'"),
    ),
    (
        "Q4.1",
        """select d_year, c_nation, sum(lo_revenue - lo_supplycost) as profit
from date, customer, supplier, part, lineorder
where lo_custkey = c_custkey
and lo_suppkey = s_suppkey
and lo_partkey = p_partkey
and lo_orderdate = d_datekey
and c_region = 'AMERICA'
and s_region = 'AMERICA'
and (p_mfgr = 'MFGR#1' or p_mfgr = 'MFGR#2')
group by d_year, c_nation
order by d_year, c_nation""",
    ),
    (
        "Q4.2",
        """select d_year, s_nation, p_category, sum(lo_revenue - lo_supplycost) as profit
from date, customer, supplier, part, lineorder
where lo_custkey = c_custkey
and lo_suppkey = s_suppkey
and lo_partkey = p_partkey
and lo_orderdate = d_datekey
and c_region = 'AMERICA'
and s_region = 'AMERICA'
and (d_year = 1997 or d_year = 1998)
and (p_mfgr = 'MFGR#1' or p_mfgr = 'MFGR#2')
group by d_year, s_nation, p_category
order by d_year, s_nation, p_category""",
    ),
    (
        "Q4.3",
        """select d_year, s_city, p_brand1, sum(lo_revenue - lo_supplycost) as profit
from date, customer, supplier, part, lineorder
where lo_custkey = c_custkey
and lo_suppkey = s_suppkey
and lo_partkey = p_partkey
and lo_orderdate = d_datekey
and s_nation = 'UNITED STATES'
and (d_year = 1997 or d_year = 1998)
and p_category = 'MFGR#14'
group by d_year, s_city, p_brand1
order by d_year, s_city, p_brand1""",
    ),
)


def workload(lattice: Lattice) -> Workload:
    """The 13 queries, each once, as a tile planner's workload over the SSB lattice."""
    return workload_from_sql(((sql, 1.0) for _, sql in QUERIES), lattice)
