"""The setting of the old-snapshot benchmarks (issue 21): a table sampled under a REPEATABLE READ
snapshot while rows it cannot see are inserted.  Used by bench/old_snapshot_sampling.py,
bench/old_snapshot_crossover.py and bench/profile/old_snapshot_profile.py."""

import sys

# a throwaway cluster that writes fast: the inserts are the load, not what is measured
SETTINGS = {"shared_buffers": "1GB", "autovacuum": "off", "max_wal_size": "20GB",
            "checkpoint_timeout": "1h", "fsync": "off", "synchronous_commit": "off",
            "full_page_writes": "off", "jit": "off"}
QUERY = "SELECT count(*) FROM a TABLESAMPLE swr(10000)"


def run(conn, sql):
    cur = conn.cursor()
    cur.execute(sql)
    return cur.fetchall() if cur.description else None


def insert_sql(salt, rows):
    """rows rows of random-looking keys, different for every salt."""
    return (f"INSERT INTO a SELECT g, ((g::int8 * 2246822519 + {salt}) % 2147483647 "
            f"- 1073741823)::int4 FROM generate_series(1, {rows}) g")


def load(cl, rows, prewarm=True):
    """a(x int4, y int4) of rows rows with an abtree index on y; returns a connection."""
    if cl.preload != "abtree":
        sys.exit("abtree did not load: " + " ".join(cl.notes))
    c = cl.connect()
    for sql in ("CREATE EXTENSION abtree", "CREATE EXTENSION pg_prewarm",
                "CREATE TABLE a (x int4, y int4)",
                f"INSERT INTO a SELECT g, ((g::int8 * 2654435761) % 2147483647 "
                f"- 1073741823)::int4 FROM generate_series(1, {rows}) g",
                "CREATE INDEX a_y ON a USING abtree (y)", "VACUUM (FREEZE, ANALYZE) a"):
        run(c, sql)
    if prewarm:
        run(c, "SELECT pg_prewarm('a'), pg_prewarm('a_y')")
    return c


def old_snapshot(cl):
    """A connection in a REPEATABLE READ transaction whose snapshot is taken now."""
    s = cl.connect()
    s.autocommit = False
    run(s, "BEGIN ISOLATION LEVEL REPEATABLE READ")
    run(s, "SELECT count(*) FROM a WHERE x = 1")
    return s
