#!/usr/bin/python3
"""Differential testing of ordered index scans: generated queries through btree, abtree, pbtree
and a sequential scan must return the same rows (issue 20).

One table, t(a int4, b text, c date, d int8, pad int), is copied into three tables, each with one
index over the same columns: btree, abtree and pbtree (with a small buffer budget, so that it
seals and merges into several partitions).  Each generated query is run four times, forced
through each index (enable_* settings; the plan is checked to use the index meant) and through
a sequential scan, and the answers are compared:
  - WHERE clauses on key prefixes: =, <, <=, >, >=, BETWEEN, IS [NOT] NULL, = ANY, and
    cross-type bounds (int4 column against int8 and numeric-free int2 constants, date against
    timestamp and timestamptz);
  - ORDER BY the index order or its reverse (backward scans), with and without LIMIT;
  - index-only scans (only key columns selected) and plain index scans;
  - scrollable cursors with a random sequence of FETCH directions
    (NEXT, PRIOR, FIRST, LAST, ABSOLUTE n, RELATIVE n, FORWARD n, BACKWARD n, ALL, BACKWARD ALL).
Index definitions vary over the run: multi-column keys with DESC and NULLS FIRST.

  test/stress/differential.py --bindir DIR [--seed S] [--queries N]

prints TAP: one line per index definition (all its queries agree) and a diagnostic for each
mismatch (the query, the FETCH sequence, each path's answer).  CI runs a fixed seed; long runs:
  test/stress/differential.py --bindir DIR --seed $RANDOM --queries 100000
"""

import argparse
import os
import random
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stress import Tap  # noqa: E402
import interleave  # noqa: E402

import psycopg2  # noqa: E402

ROWS = 3000
PATHS = ('btree', 'abtree', 'pbtree', 'seqscan')
# the forced settings of each path
FORCE = {
    'btree': "SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off",
    'abtree': "SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off",
    'pbtree': "SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off",
    'seqscan': "SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off",
}
COLS = ('a', 'b', 'c', 'd')
# index definitions: (columns with options)
DEFS = [
    ['a'],
    ['a DESC'],
    ['b', 'a'],
    ['a NULLS FIRST', 'c DESC'],
    ['c', 'd DESC NULLS LAST', 'a'],
    ['d DESC', 'b NULLS FIRST'],
]


def init_server(bindir, base):
    # a small pbtree budget, so that pbtree seals and merges partitions
    return interleave.init_server(bindir, base, False, name='diff',
                                  conf="abtree.pbtree_buffer_budget = 8\n"
                                       "abtree.pbtree_merge_threshold = 3\n")


def setup(srv, rng):
    srv.query("CREATE EXTENSION abtree")
    srv.query("CREATE TABLE src (a int4, b text, c date, d int8, pad int)")
    rows = []
    for i in range(ROWS):
        a = None if rng.random() < 0.03 else rng.randrange(-50, 400)
        b = None if rng.random() < 0.03 else rng.choice(('x', 'y', 'z', 'ab', 'b', '')) + str(rng.randrange(0, 30))
        c = None if rng.random() < 0.03 else '2024-01-01'
        cday = rng.randrange(0, 200)
        d = None if rng.random() < 0.03 else rng.randrange(-10**10, 10**10, 10**7)
        rows.append((a, b, None if c is None else cday, d, i))
    cur = srv.conn().cursor()
    cur.executemany("INSERT INTO src VALUES (%s, %s, DATE '2024-01-01' + %s::int, %s, %s)", rows)
    cur.connection.close()


def make_tables(srv, cols):
    for am in ('btree', 'abtree', 'pbtree'):
        srv.query(f"DROP TABLE IF EXISTS t_{am}")
        srv.query(f"CREATE TABLE t_{am} AS SELECT * FROM src WITH NO DATA")
        srv.query(f"CREATE INDEX t_{am}_idx ON t_{am} USING {am} ({', '.join(cols)})")
        # in pieces, so that pbtree seals and merges partitions and abtree splits
        for lo in range(0, ROWS, 700):
            srv.query(f"INSERT INTO t_{am} SELECT * FROM src WHERE pad >= {lo} AND pad < {lo + 700}")
        srv.query(f"VACUUM ANALYZE t_{am}")


def literal(rng, col, cross):
    if col == 'a':
        v = rng.randrange(-60, 410)
        if cross:
            return rng.choice((f"{v}::int8", f"{v}::int2"))
        return str(v)
    if col == 'b':
        return "'" + rng.choice(('x', 'y', 'z', 'ab', 'b', '', 'a', 'zz')) + str(rng.randrange(0, 30)) + "'"
    if col == 'c':
        day = rng.randrange(-5, 205)
        if cross:
            return rng.choice((f"(DATE '2024-01-01' + {day})::timestamp",
                               f"(DATE '2024-01-01' + {day})::timestamp + interval '6 hours'",
                               f"((DATE '2024-01-01' + {day})::timestamp AT TIME ZONE 'UTC')"))
        return f"DATE '2024-01-01' + {day}"
    v = rng.randrange(-10**10, 10**10, 10**7)
    return f"{v}::int4" if cross and abs(v) < 2**31 else str(v)


def condition(rng, col):
    kind = rng.choice(('=', '<', '<=', '>', '>=', 'between', 'null', 'notnull', 'any', 'range'))
    cross = rng.random() < 0.25
    if kind == 'null':
        return f"{col} IS NULL"
    if kind == 'notnull':
        return f"{col} IS NOT NULL"
    if kind == 'between':
        lo, hi = literal(rng, col, cross), literal(rng, col, cross)
        return f"{col} BETWEEN {lo} AND {hi}"
    if kind == 'range':
        return f"{col} > {literal(rng, col, cross)} AND {col} < {literal(rng, col, cross)}"
    if kind == 'any':
        vals = ", ".join(literal(rng, col, False) for _ in range(rng.randrange(1, 5)))
        return f"{col} = ANY (ARRAY[{vals}])"
    return f"{col} {kind} {literal(rng, col, cross)}"


def order_by(cols, reverse):
    parts = []
    for c in cols:
        words = c.split()
        name, desc = words[0], 'DESC' in words
        nulls_first = 'FIRST' in words if 'NULLS' in words else desc
        if reverse:
            desc, nulls_first = not desc, not nulls_first
        parts.append(f"{name} {'DESC' if desc else 'ASC'} NULLS {'FIRST' if nulls_first else 'LAST'}")
    return ", ".join(parts)


def gen_query(rng, cols):
    names = [c.split()[0] for c in cols]
    conds = []
    for name in names[:rng.randrange(0, len(names) + 1)]:
        if rng.random() < 0.8:
            conds.append(condition(rng, name))
    if rng.random() < 0.2:
        conds.append(condition(rng, rng.choice(COLS)))
    where = (" WHERE " + " AND ".join(conds)) if conds else ""
    select = ", ".join(names) if rng.random() < 0.5 else "*"
    ordered = rng.random() < 0.85
    reverse = rng.random() < 0.5
    # unique order for comparisons: the index order, then pad
    ob = (" ORDER BY " + order_by(cols, reverse)) if ordered else ""
    limit = f" LIMIT {rng.randrange(0, 40)}" if ordered and rng.random() < 0.3 else ""
    return select, where, ob, limit, ordered


FETCHES = ('NEXT', 'PRIOR', 'FIRST', 'LAST', 'ABSOLUTE {n}', 'ABSOLUTE -{n}', 'RELATIVE {n}',
           'RELATIVE -{n}', 'FORWARD {n}', 'BACKWARD {n}', 'ALL', 'BACKWARD ALL')


def run_path(conn, path, sql, fetches):
    cur = conn.cursor()
    cur.execute("BEGIN")
    try:
        cur.execute(FORCE[path])
        if path in ('btree', 'abtree', 'pbtree'):
            cur.execute("EXPLAIN (COSTS OFF) " + sql)
            plan = "\n".join(r[0] for r in cur.fetchall())
            if f"t_{path}_idx" not in plan:
                return None     # the planner would not use it for this query
        if fetches is None:
            cur.execute(sql)
            out = [tuple(r) for r in cur.fetchall()]
        else:
            cur.execute(f"DECLARE dc SCROLL CURSOR FOR {sql}")
            out = []
            for f in fetches:
                cur.execute(f"FETCH {f} FROM dc")
                out.append([tuple(r) for r in cur.fetchall()])
        return out
    finally:
        cur.execute("ROLLBACK")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--bindir', required=True)
    ap.add_argument('--seed', type=int, default=7)
    ap.add_argument('--queries', type=int, default=1500)
    ap.add_argument('--figures-dir', default=None, help='accepted for the test runner; unused')
    ap.add_argument('--keep', action='store_true')
    args = ap.parse_args()
    tap = Tap()
    rng = random.Random(args.seed)
    base = tempfile.mkdtemp(prefix='abtree-differential-')
    os.chmod(base, 0o755)
    srv = init_server(args.bindir, base)
    try:
        setup(srv, rng)
        conn = srv.conn()
        per_def = max(1, args.queries // len(DEFS))
        for cols in DEFS:
            make_tables(srv, cols)
            bad, compared, unused = [], 0, {p: 0 for p in PATHS[:3]}
            for _ in range(per_def):
                select, where, ob, limit, ordered = gen_query(rng, cols)
                cursor = ordered and not limit and rng.random() < 0.4
                fetches = None
                if cursor:
                    fetches = [rng.choice(FETCHES).format(n=rng.randrange(0, 60))
                               for _ in range(rng.randrange(2, 9))]
                answers = {}
                for p in PATHS:
                    tab = 't_btree' if p == 'seqscan' else f't_{p}'
                    sql = f"SELECT {select} FROM {tab}{where}{ob}{limit}"
                    a = run_path(conn, p, sql, fetches)
                    if a is None:
                        unused[p] += 1
                        continue
                    if not ordered:
                        a = sorted(a, key=repr)
                    answers[p] = a
                # rows that tie on the key may come in any order: compare the keys in
                # order, and the whole rows as multisets where no LIMIT or FETCH cuts ties
                names = [c.split()[0] for c in cols]

                def key(r):
                    return r if select != "*" else tuple(r[COLS.index(n)] for n in names)

                def norm_rows(rows):
                    if not ordered:
                        return sorted(rows, key=repr)
                    keys = [key(r) for r in rows]
                    return (keys, None if limit else sorted(rows, key=repr))
                norm = {p: norm_rows(a) if fetches is None else [[key(r) for r in x] for x in a]
                        for p, a in answers.items()}
                ref = norm.get('seqscan')
                compared += 1
                for p, a in norm.items():
                    if a != ref:
                        bad.append(f"{p}: SELECT {select} FROM t{where}{ob}{limit}"
                                   + (f"; FETCH {fetches}" if fetches else "")
                                   + f"\n  {p}: {str(a)[:300]}\n  seqscan: {str(ref)[:300]}")
                        break
            tap.ok(not bad, f"index ({', '.join(cols)}): {compared} queries agree across "
                   f"{', '.join(PATHS)} (not chosen by the planner: "
                   + ", ".join(f"{p} {n}" for p, n in unused.items()) + ")",
                   "\n".join(bad[:5]))
        conn.close()
    finally:
        srv.stop()
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print(f"1..{tap.n}")
    return 1 if tap.failed else 0


if __name__ == '__main__':
    sys.exit(main())
