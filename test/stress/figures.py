"""Figures files of the reliability suites (format: test/RELIABILITY.md).

One file per suite and PostgreSQL major version, <dir>/<suite>.pg<major>.txt,
lines "key: value":

    suite: stress_crash
    title: Crash cycles under a mixed workload
    pg: 15.13
    date: 2025-01-01T12:00:00Z
    status: pass
    figure: cycles survived = 4
    figure: rows checked = 61234
    note: seed 4242
    describe: one line of description (repeatable)

The report (test/reliability-report) reads every such file.
"""
import datetime
import os


def figures_dir(explicit=None):
    d = explicit or os.environ.get('ABTREE_FIGURES_DIR')
    if not d:
        d = os.path.join(os.environ.get('TESTDIR', os.getcwd()), 'figures')
    os.makedirs(d, exist_ok=True)
    return d


def write_figures(directory, suite, title, pg_version, status, figures,
                  notes=(), describe=()):
    major = pg_version.split('.')[0]
    path = os.path.join(figures_dir(directory), '%s.pg%s.txt' % (suite, major))
    now = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')
    with open(path, 'w') as f:
        f.write('suite: %s\ntitle: %s\npg: %s\ndate: %s\nstatus: %s\n'
                % (suite, title, pg_version, now, status))
        for line in describe:
            f.write('describe: %s\n' % line)
        for name, value in figures:
            f.write('figure: %s = %s\n' % (name, value))
        for n in notes:
            f.write('note: %s\n' % str(n).replace('\n', ' '))
    return path
