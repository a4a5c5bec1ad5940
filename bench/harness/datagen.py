"""Deterministic data generators, as SQL run inside the server.

Every generator returns a list of SQL statements (run them one by one in one session; VACUUM
cannot share a multi-statement string).  Determinism comes from setseed() in that session:
INSERT ... SELECT never runs in parallel, so the same seed gives the same rows on every run and
every machine with the same PostgreSQL major version.  Subqueries that draw random() carry
OFFSET 0 so that the planner cannot inline them and draw a value twice.

`bench/datagen` prints the same SQL for psql, e.g. `bench/datagen a --rows 1000000 | psql`.
"""

import argparse
import sys


def _setseed(seed):
    # setseed() takes a double in [-1, 1]; spread small integer seeds over [0, 1).
    return f"SELECT setseed({(seed * 2654435761 % 2**31) / 2**31!r})"


# -- A(x int4, y int4): paper 000's narrow table of random integers ---------------------------

def table_a(rows, seed=1, table="a"):
    """rows random (x, y), both uniform over 0 .. 2^31-1."""
    return [
        f"DROP TABLE IF EXISTS {table}",
        f"CREATE TABLE {table} (x int4, y int4)",
        _setseed(seed),
        f"INSERT INTO {table} SELECT floor(random() * 2147483648)::int4, "
        f"floor(random() * 2147483648)::int4 FROM generate_series(1, {int(rows)})",
        f"VACUUM (ANALYZE) {table}",
    ]


# -- lineitem: TPC-H-like distributions (TPC-H spec 4.2.3, simplified) ------------------------
#
# Orders: 1,500,000 per scale factor, keys sparse like dbgen's (8 used out of every 32), order
# dates uniform over 1992-01-01 .. 1998-08-02, 1..7 lines each (about 6,000,000 lines per scale
# factor).  Lines: partkey and suppkey uniform, quantity 1..50, extendedprice = quantity times
# the part's retail price formula, discount 0.00..0.10, tax 0.00..0.08, shipdate = orderdate +
# 1..121 days (so 1992-01-02 .. 1998-12-01), commitdate = orderdate + 30..90, receiptdate =
# shipdate + 1..30, returnflag and linestatus against TPC-H's "current date" 1995-06-17,
# shipinstruct and shipmode uniform over TPC-H's lists, a comment of 10..43 characters.

LINEITEM_DDL = """CREATE TABLE {table} (
    l_orderkey      int8 NOT NULL,
    l_partkey       int4 NOT NULL,
    l_suppkey       int4 NOT NULL,
    l_linenumber    int4 NOT NULL,
    l_quantity      numeric(15,2) NOT NULL,
    l_extendedprice numeric(15,2) NOT NULL,
    l_discount      numeric(15,2) NOT NULL,
    l_tax           numeric(15,2) NOT NULL,
    l_returnflag    char(1) NOT NULL,
    l_linestatus    char(1) NOT NULL,
    l_shipdate      date NOT NULL,
    l_commitdate    date NOT NULL,
    l_receiptdate   date NOT NULL,
    l_shipinstruct  char(25) NOT NULL,
    l_shipmode      char(10) NOT NULL,
    l_comment       varchar(44) NOT NULL)"""

LAST_SHIPDATE = "1998-12-01"
_INSTRUCT = "ARRAY['DELIVER IN PERSON','COLLECT COD','NONE','TAKE BACK RETURN']"
_MODES = "ARRAY['REG AIR','AIR','RAIL','SHIP','TRUCK','MAIL','FOB']"


def _lineitem_insert(table, orders_sql, ship_expr, sf):
    """INSERT ... SELECT of the lines of the orders that orders_sql yields as
    (orderkey, orderdate, nlines[, shipdate])."""
    parts = max(1, round(200000 * sf))
    supps = max(1, round(10000 * sf))
    return f"""INSERT INTO {table}
SELECT o.orderkey, l.partkey, l.suppkey, l.ln, l.qty,
       l.qty * ((90000 + (l.partkey / 10) % 20001 + 100 * (l.partkey % 1000)) / 100.0),
       l.disc, l.tax,
       CASE WHEN l.ship + l.rdelay > date '1995-06-17' THEN 'N'
            WHEN l.rf < 0.5 THEN 'R' ELSE 'A' END,
       CASE WHEN l.ship > date '1995-06-17' THEN 'O' ELSE 'F' END,
       l.ship, o.orderdate + l.cdelay, l.ship + l.rdelay, l.instr, l.mode, l.cmt
FROM ({orders_sql} OFFSET 0) o
CROSS JOIN LATERAL (
    SELECT ln,
           1 + floor(random() * {parts})::int4 AS partkey,
           1 + floor(random() * {supps})::int4 AS suppkey,
           (1 + floor(random() * 50))::numeric AS qty,
           (floor(random() * 11) / 100)::numeric(15,2) AS disc,
           (floor(random() * 9) / 100)::numeric(15,2) AS tax,
           {ship_expr} AS ship,
           30 + floor(random() * 61)::int AS cdelay,
           1 + floor(random() * 30)::int AS rdelay,
           random() AS rf,
           ({_INSTRUCT})[1 + floor(random() * 4)::int] AS instr,
           ({_MODES})[1 + floor(random() * 7)::int] AS mode,
           substr(md5(random()::text) || md5(random()::text), 1,
                  10 + floor(random() * 34)::int) AS cmt
    FROM generate_series(1, o.nlines) ln OFFSET 0) l"""


def lineitem(sf=1.0, seed=1, table="lineitem"):
    """A lineitem table of about 6,000,000 x sf rows (sf=0.1: about 600,000)."""
    orders = max(1, round(1500000 * sf))
    orders_sql = (f"SELECT ((o - 1) / 8) * 32 + (o - 1) % 8 + 1 AS orderkey, "
                  f"date '1992-01-01' + floor(random() * 2406)::int AS orderdate, "
                  f"1 + floor(random() * 7)::int AS nlines "
                  f"FROM generate_series(1::int8, {orders}) o")
    return [
        f"DROP TABLE IF EXISTS {table}",
        LINEITEM_DDL.format(table=table),
        _setseed(seed),
        _lineitem_insert(table, orders_sql, "o.orderdate + 1 + floor(random() * 121)::int", sf),
        f"VACUUM (ANALYZE) {table}",
    ]


def lineitem_inserts(rows, seed=2, table="lineitem", sf=1.0, recent=0.99, recent_days=183,
                     first_orderkey=None):
    """rows new one-line orders for insert workloads, with paper 000's skew (section 5.4):
    a fraction `recent` of ship dates within the last recent_days days before 1998-12-01, the rest
    uniform over the whole 1992-01-02 .. 1998-12-01 range (recent=0 gives no skew).  Order keys
    continue above the loaded ones (default: above sf's largest key)."""
    if first_orderkey is None:
        first_orderkey = (round(1500000 * sf) // 8 + 1) * 32 + 1
    orders_sql = (f"SELECT {first_orderkey} + g AS orderkey, "
                  f"ship - 1 - floor(random() * 121)::int AS orderdate, 1 AS nlines, ship "
                  f"FROM (SELECT g, CASE WHEN random() < {float(recent)!r} "
                  f"THEN date '{LAST_SHIPDATE}' - floor(random() * {int(recent_days)})::int "
                  f"ELSE date '{LAST_SHIPDATE}' - floor(random() * 2526)::int END AS ship "
                  f"FROM generate_series(0::int8, {int(rows) - 1}) g OFFSET 0) s")
    return [_setseed(seed), _lineitem_insert(table, orders_sql, "o.ship", sf)]


# -- Zipf-skewed column pairs with controlled correlation -------------------------------------

def zipf_pair(rows, s=1.0, corr=0.0, ndv=10000, seed=1, table="zipf"):
    """Table (a int4, b int4).  a is Zipf(s) over 1..ndv (value k has probability proportional
    to k^-s; s=0 is uniform).  b equals a with probability corr and is otherwise an independent
    Zipf(s) draw: corr=0 gives independent columns, corr=1 a functional dependency b = a."""
    if not 0 <= corr <= 1:
        raise ValueError("corr must be in [0, 1]")
    cdf = f"{table}_cdf"
    return [
        f"DROP TABLE IF EXISTS {table}, {cdf}",
        f"CREATE TEMP TABLE {cdf} AS SELECT k, sum(power(k::float8, {-float(s)!r})) "
        f"OVER (ORDER BY k) / sum(power(k::float8, {-float(s)!r})) OVER () AS c "
        f"FROM generate_series(1, {int(ndv)}) k",
        f"UPDATE {cdf} SET c = 1 WHERE k = {int(ndv)}",
        f"CREATE INDEX ON {cdf} (c)",
        f"ANALYZE {cdf}",
        f"CREATE TABLE {table} (a int4, b int4)",
        _setseed(seed),
        f"""INSERT INTO {table}
SELECT za.k, CASE WHEN r.uc < {float(corr)} THEN za.k ELSE zb.k END
FROM (SELECT g, random() AS ua, random() AS ub, random() AS uc
      FROM generate_series(1, {int(rows)}) g OFFSET 0) r
CROSS JOIN LATERAL (SELECT k FROM {cdf} WHERE c >= r.ua ORDER BY c LIMIT 1) za
CROSS JOIN LATERAL (SELECT k FROM {cdf} WHERE c >= r.ub ORDER BY c LIMIT 1) zb""",
        f"DROP TABLE {cdf}",
        f"VACUUM (ANALYZE) {table}",
    ]


# -- command line: print the SQL -------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(prog="bench/datagen",
                                 description="Print SQL that creates and fills a benchmark table.")
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("a", help="A(x int4, y int4) of random values (paper 000)")
    p.add_argument("--rows", type=int, default=1000000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--table", default="a")
    p = sub.add_parser("lineitem", help="TPC-H-like lineitem, about 6M x sf rows")
    p.add_argument("--sf", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--table", default="lineitem")
    p = sub.add_parser("lineitem-inserts", help="new lineitem rows with recent-date skew")
    p.add_argument("--rows", type=int, default=10000)
    p.add_argument("--sf", type=float, default=1.0, help="scale factor of the loaded table")
    p.add_argument("--recent", type=float, default=0.99,
                   help="fraction of ship dates in the last --recent-days days (0: no skew)")
    p.add_argument("--recent-days", type=int, default=183)
    p.add_argument("--seed", type=int, default=2)
    p.add_argument("--table", default="lineitem")
    p = sub.add_parser("zipf", help="Zipf-skewed column pair (a, b) with correlation")
    p.add_argument("--rows", type=int, default=1000000)
    p.add_argument("--s", type=float, default=1.0, help="Zipf exponent (0: uniform)")
    p.add_argument("--corr", type=float, default=0.0, help="P(b = a), 0..1")
    p.add_argument("--ndv", type=int, default=10000, help="values 1..ndv")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--table", default="zipf")
    a = ap.parse_args(argv)
    if a.what == "a":
        stmts = table_a(a.rows, a.seed, a.table)
    elif a.what == "lineitem":
        stmts = lineitem(a.sf, a.seed, a.table)
    elif a.what == "lineitem-inserts":
        stmts = lineitem_inserts(a.rows, a.seed, a.table, a.sf, a.recent, a.recent_days)
    else:
        stmts = zipf_pair(a.rows, a.s, a.corr, a.ndv, a.seed, a.table)
    sys.stdout.write("".join(s + ";\n" for s in stmts))
