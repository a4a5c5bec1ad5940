#!/usr/bin/python3
"""Fuzzing of chll input: mutated values through every way in, never a crash (issue 25).

A chll value comes from outside as text (chll_in), as binary (chll_recv), from bytea
(chll(bytea)), or from storage, which input never checked (forged here through a
binary-coercible cast, as on-disk corruption might make them).  Since 0.2 they are packed
(src/hll/README, "Packed form"): runs of varints that the library decodes first.  Seeds are
sketches of several bucket counts and sizes; each mutation changes, cuts, inserts or repeats
bytes (0xff runs make long varints), in the header or in the runs.

  - every mutated input is a value or an error of class 22 (invalid input), or XX001 (data
    corrupted) for stored values; never another error, never a crash;
  - the packed form matches the README: decoded here in Python, it gives the flat bytes, and
    those flat bytes as input give the same value back;
  - the server is still up at the end and its log has no crash.

  test/stress/chll_fuzz.py --bindir DIR [--seed S] [--mutations N]

prints TAP.  CI runs a fixed seed; long runs: --seed $RANDOM --mutations 1000000
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

SEEDS = [
    "chll_create(16)",
    "(SELECT chll_agg(g, 16) FROM generate_series(1, 5) g)",
    "(SELECT chll_agg(g % 50) FROM generate_series(1, 1000) g)",
    "(SELECT chll_agg(g) FROM generate_series(1, 3000) g)",
    "(SELECT chll_agg(g, 64) FROM generate_series(1, 200) g)",
    "(SELECT chll_agg(g % 7, 16) FROM generate_series(1, 100000) g)",
]
# what a forged stored value is put through
OPS = ("SELECT chll_estimate(s), chll_add(s, 1)::text, (chll_info(s)).items, "
       "chll_hash_sketch(s), s::text, (SELECT count(*) FROM chll_counters(s)), "
       "chll_union(s, s)::text FROM (SELECT %s::bytea::chll AS s) x")


def flat(packed):
    """The flat bytes of a chll value's bytes, as the README describes the packed form."""
    if len(packed) < 24 or not packed[2] & 0x80:
        return bytes(packed)
    out = bytearray(packed[:24])
    out[2] &= 0x7f
    p = 24

    def varint():
        nonlocal p
        v = shift = 0
        while True:
            c = packed[p]
            p += 1
            v |= (c & 0x7f) << shift
            if c < 0x80:
                return v
            shift += 7
    while p < len(packed):
        zeros, nlit = varint(), varint()
        out += bytes(zeros) + packed[p:p + nlit]
        p += nlit
    return bytes(out)


def mutate(rng, b):
    b = bytearray(b)
    for _ in range(rng.randint(1, 6)):
        op = rng.random()
        if op < 0.45 and b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif op < 0.65:
            b = b[:rng.randrange(len(b) + 1)]
        elif op < 0.8:
            p = rng.randrange(len(b) + 1)
            b[p:p] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        else:
            p = rng.randrange(min(24, len(b)), len(b) + 1)
            b[p:p] = b'\xff' * rng.randint(1, 6)
    return bytes(b)


def outcome(cur, sql, args, allowed):
    """None if the statement answered or failed with an allowed SQLSTATE, else a diagnosis."""
    try:
        cur.execute(sql, args)
        cur.fetchall()
        return None
    except psycopg2.Error as e:
        if e.pgcode is not None and (e.pgcode[:2] == '22' or e.pgcode in allowed):
            return None
        return f"{e.pgcode}: {e}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--bindir', required=True)
    ap.add_argument('--seed', type=int, default=3)
    ap.add_argument('--mutations', type=int, default=3000)
    ap.add_argument('--figures-dir', default=None, help='accepted for the test runner; unused')
    ap.add_argument('--keep', action='store_true')
    args = ap.parse_args()
    tap = Tap()
    rng = random.Random(args.seed)
    base = tempfile.mkdtemp(prefix='abtree-chll-fuzz-')
    os.chmod(base, 0o755)
    srv = interleave.init_server(args.bindir, base, False, name='fz')
    try:
        srv.query("CREATE EXTENSION abtree")
        conn = srv.conn()
        conn.autocommit = True
        cur = conn.cursor()
        seeds = []
        for q in SEEDS:
            cur.execute(f"SELECT ({q})::bytea")
            seeds.append(bytes(cur.fetchone()[0]))

        # the packed form as the README has it
        bad = []
        for b in seeds:
            cur.execute("SELECT %s::chll::text, (chll_info(%s::chll)).bytes",
                        ('\\x' + flat(b).hex(), '\\x' + b.hex()))
            text, size = cur.fetchone()
            if text != '\\x' + b.hex() or len(flat(b)) != size:
                bad.append(f"{b[:32].hex()}...: flat input gives {text[:80]}, size {size}")
        tap.ok(not bad, f"the {len(seeds)} seeds decode as the README says, and their flat "
               "bytes read back as the same value", "\n".join(bad))

        cur.execute("CREATE CAST (bytea AS chll) WITHOUT FUNCTION")
        for way, sql, allowed in (
                ("text input", "SELECT chll_estimate(%s::chll)", ()),
                ("chll(bytea)", "SELECT (chll_info(chll(%s::bytea))).items", ()),
                ("stored values", OPS, ('XX001',))):
            bad = []
            for _ in range(args.mutations):
                m = mutate(rng, rng.choice(seeds))
                arg = '\\x' + m.hex() if way == "text input" else m
                why = outcome(cur, sql, (arg,), allowed)
                if why:
                    bad.append(f"{m.hex()[:120]}: {why}")
                    if len(bad) > 5:
                        break
            tap.ok(not bad, f"{args.mutations} mutated values by {way}: a value or a clean "
                   "error", "\n".join(bad))
        cur.execute("DROP CAST (bytea AS chll)")

        cur.execute("SELECT 1")
        log = srv.logtext()
        tap.ok(cur.fetchone()[0] == 1 and 'terminated by signal' not in log
               and 'TRAP' not in log, "the server is up and its log has no crash",
               "\n".join(line for line in log.splitlines() if 'signal' in line or 'TRAP' in line))
    finally:
        srv.stop()
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print(f"1..{tap.n}")
    sys.exit(1 if tap.failed else 0)


if __name__ == '__main__':
    main()
