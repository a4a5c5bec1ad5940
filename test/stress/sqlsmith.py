#!/usr/bin/python3
"""Fuzz abtree with sqlsmith (issue 10, reliability).

A throwaway server gets a database built by fuzz_schema.sql (abtree indexes
of several shapes, weighted and partitioned, chll columns, views sampling
with TABLESAMPLE swr, wrappers that give sqlsmith concrete argument types for
our polymorphic functions), owned by a role that is not a superuser.
sqlsmith then runs --queries random queries with a fixed --seed as that
role.  Checks (TAP):

  - sqlsmith ran all its queries and the server is still up;
  - the server log has no "TRAP:" (failed assertion), PANIC, or backend
    "terminated by signal";
  - the queries reached our code: enough of them name our functions, views
    or sampling views, and abtree_swr_stats counts draws;
  - afterwards (sqlsmith also inserts, updates and deletes) every index of
    the fuzz database verifies exactly with heapallindexed.

The queries sqlsmith generated stay in the work directory (kept with --keep
or on failure); the error summary (message, count) and the figures go to
--figures-dir.  Usage: sqlsmith.py [--queries N] [--seed S] [--bindir DIR]
Environment: ABTREE_SQLSMITH_QUERIES, ABTREE_SQLSMITH_SEED.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from figures import figures_dir, write_figures  # noqa: E402
from stress import Tap, init_primary  # noqa: E402

OURS = re.compile(r'\b(abtree_\w+|chll\w*|swr_\w+|fz_(?:swr|range|chll|ndistinct|sample|verify)\w*)\b')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--queries', type=int, default=int(os.environ.get('ABTREE_SQLSMITH_QUERIES', 2000)))
    ap.add_argument('--seed', type=int, default=int(os.environ.get('ABTREE_SQLSMITH_SEED', 4242)))
    ap.add_argument('--bindir', default=None)
    ap.add_argument('--figures-dir', default=None)
    ap.add_argument('--keep', action='store_true')
    args = ap.parse_args()
    bindir = args.bindir or subprocess.run(['pg_config', '--bindir'], capture_output=True,
                                           text=True, check=True).stdout.strip()
    tap = Tap()
    tap.note('sqlsmith: seed %d, %d queries, bindir %s' % (args.seed, args.queries, bindir))
    base = tempfile.mkdtemp(prefix='abtree-sqlsmith.')
    srv = init_primary(bindir, base, False)
    pgver = srv.query('SHOW server_version')[0][0].split()[0]
    srv.query("CREATE ROLE fuzzer LOGIN")
    srv.query("CREATE DATABASE fz OWNER fuzzer")
    # the extension by the superuser, the rest by the fuzzer
    subprocess.run([os.path.join(bindir, 'psql'), '-X', '-q', '-v', 'ON_ERROR_STOP=1',
                    '-h', base, '-p', str(srv.port), '-U', 'postgres', '-d', 'fz',
                    '-c', 'CREATE EXTENSION abtree',
                    '-c', "ALTER DATABASE fz SET statement_timeout = '3s'",
                    '-c', "ALTER DATABASE fz SET abtree.swr_index = 'fz_t_k, fz_u_k, fz_p_k, fz_empty_kw'"],
                   check=True)
    subprocess.run([os.path.join(bindir, 'psql'), '-X', '-q', '-v', 'ON_ERROR_STOP=1',
                    '-h', base, '-p', str(srv.port), '-U', 'fuzzer', '-d', 'fz',
                    '-f', os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fuzz_schema.sql')],
                   check=True, stdout=subprocess.DEVNULL)
    qfile = os.path.join(base, 'queries.sql')
    efile = os.path.join(base, 'sqlsmith.log')
    t0 = time.time()
    with open(qfile, 'w') as qf, open(efile, 'w') as ef:
        rc = subprocess.run(['sqlsmith', '--target=host=%s port=%d dbname=fz user=fuzzer' % (base, srv.port),
                             '--seed=%d' % args.seed, '--max-queries=%d' % args.queries,
                             '--dump-all-queries', '--verbose'],
                            stdout=qf, stderr=ef, timeout=1800).returncode
    secs = time.time() - t0
    with open(efile, errors='replace') as f:
        elog = f.read()
    with open(qfile, errors='replace') as f:
        queries = [q for q in f.read().split(';\n') if q.strip()]
    # --verbose prints a cumulative report now and then: use the last one
    ms = list(re.finditer(r'^queries: (\d+)', elog, re.M))
    ran = int(ms[-1].group(1)) if ms else 0
    last = elog[ms[-1].start():] if ms else ''
    tap.ok(rc == 0 and ran == args.queries,
           'sqlsmith ran %d of %d queries (exit %d, %.0f s)' % (ran, args.queries, rc, secs),
           elog[-3000:])
    # error summary: lines "<count>\t<message>"
    errors = []
    for line in last.splitlines():
        mm = re.match(r'^(\d+)\t(.*)$', line)
        if mm:
            errors.append((int(mm.group(1)), mm.group(2)))
    nerrors = sum(c for c, _ in errors)
    reached = {}
    nours = 0
    for q in queries:
        names = set(OURS.findall(q))
        if names:
            nours += 1
        for n in names:
            reached[n] = reached.get(n, 0) + 1
    try:
        alive = srv.query('SELECT 1')[0][0] == 1
    except Exception:
        alive = False
    tap.ok(alive, 'the server is still up')
    tap.ok(nours >= args.queries // 10 and len(reached) >= 10,
           '%d queries name %d of our functions and views' % (nours, len(reached)),
           str(sorted(reached.items())))
    draws = 0
    if alive:
        import psycopg2
        c = psycopg2.connect(host=base, port=srv.port, dbname='fz', user='postgres')
        c.autocommit = True
        cur = c.cursor()
        cur.execute('SELECT coalesce(sum(draws), 0) FROM abtree_swr_stats')
        draws = int(cur.fetchone()[0])
        cur.execute("SELECT c.oid::regclass::text FROM pg_class c JOIN pg_am a ON a.oid = c.relam "
                    "WHERE a.amname = 'abtree' AND c.relkind = 'i' ORDER BY 1")
        idxs = [r[0] for r in cur.fetchall()]
        bad = []
        for i in idxs:
            try:
                cur.execute('SELECT abtree_verify(%s, heapallindexed => true)', (i,))
            except psycopg2.Error as e:
                bad.append('%s: %s' % (i, str(e).strip()))
        c.close()
        tap.ok(not bad, 'all %d abtree indexes of the fuzz database verify after fuzzing' % len(idxs),
               '\n'.join(bad))
    tap.ok(draws > 0, 'TABLESAMPLE swr drew %d rows during fuzzing' % draws)
    srv.stop()
    log = srv.logtext()
    bad = [ln for ln in log.splitlines() if 'TRAP:' in ln or 'PANIC' in ln or 'terminated by signal' in ln]
    tap.ok(not bad, 'the server log has no TRAP, PANIC or backend terminated by a signal',
           '\n'.join(bad[:10]))
    ours_err = [(c, e) for c, e in errors if OURS.search(e) or re.search(r'abtree|chll|swr|sketch', e, re.I)]
    major = pgver.split('.')[0]
    fdir = figures_dir(args.figures_dir)
    with open(os.path.join(fdir, 'sqlsmith.pg%s.errors.txt' % major), 'w') as f:
        f.write('# sqlsmith --seed=%d --max-queries=%d on PostgreSQL %s: error messages (count, text;\n'
                '# sqlsmith cuts them at 80 characters).  Expected: random queries are mostly invalid.\n'
                % (args.seed, args.queries, pgver))
        for c, e in sorted(errors, key=lambda x: -x[0]):
            f.write('%d\t%s\n' % (c, e))
    figs = [('queries', ran), ('seed', args.seed),
            ('queries naming our functions or views', nours),
            ('distinct functions and views of ours reached', len(reached)),
            ('swr draws', draws),
            ('queries that ended in an error', nerrors),
            ('distinct error messages', len(errors)),
            ('of them from abtree, chll or swr', len(ours_err)),
            ('crashes and assertion failures', len(bad)),
            ('seconds', round(secs))]
    notes = ['our error: %d x %s' % ce for ce in ours_err[:8]]
    write_figures(args.figures_dir, 'sqlsmith', 'sqlsmith fuzzing', pgver,
                  'pass' if tap.failed == 0 else 'fail', figs, notes=notes,
                  describe=['test/stress/sqlsmith.py: sqlsmith queries against a database with '
                            'abtree indexes, chll columns, swr sampling views and wrappers '
                            '(test/stress/fuzz_schema.sql), as a non-superuser; errors in '
                            'sqlsmith.pg<N>.errors.txt'])
    for n, v in figs:
        tap.note('%s: %s' % (n, v))
    print('1..%d' % tap.n)
    if args.keep or tap.failed:
        tap.note('work directory kept: %s' % base)
    else:
        shutil.rmtree(base, ignore_errors=True)
    sys.exit(1 if tap.failed else 0)


if __name__ == '__main__':
    main()
