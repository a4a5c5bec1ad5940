"""Throwaway PostgreSQL clusters for benchmarks.

Same approach as scripts/lib.sh: initdb into a new private directory under /tmp owned by
postgres, the socket in that directory, a free port, trust authentication.  Differences: the
server listens on the socket only, our settings live in an included file (bench.conf) so that
restart() can change them, and the server runs in a session of its own so that Ctrl-C reaches
only the harness, which then stops the server in an orderly way (Cluster.stop, called from a
finally block).  A harness killed with SIGKILL leaves its directory behind with the owner's pid
in it; reap_stale() removes such leftovers on the next run.
"""

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile

import psycopg2

PG_CONFIG = os.environ.get("PG_CONFIG", "/usr/lib/postgresql/15/bin/pg_config")
DIR_PREFIX = "abtree-bench."

# Applied to every benchmark cluster and listed in every report.  The reasons:
#   fsync, synchronous_commit: we compare index code, not this VM's disk; the paper's inserting
#     client committed once per 10K rows, ours (pgbench) commits every row, and without waiting
#     for the WAL flush the commit costs about what a batched one does.
#   full_page_writes: off in the paper's setup (section 5.1); an experiment may turn it on.
#   max_wal_size, checkpoint_timeout: no checkpoint inside a measurement (paper: 48GB WAL).
#   autovacuum: off, so that no vacuum or analyze of the insert-only tables runs mid-measurement.
#   jit: off; count(*) over a 10M-row table crosses jit_above_cost and would time LLVM.
BASE_SETTINGS = {
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_wal_size": "20GB",
    "checkpoint_timeout": "1h",
    "autovacuum": "off",
    "jit": "off",
    "shared_buffers": "1GB",
}


def _is_root():
    return os.geteuid() == 0


def _as_server_user(cmd):
    """The command, run as postgres when we are root (initdb and postgres refuse root)."""
    return ["runuser", "-u", "postgres", "--"] + cmd if _is_root() else cmd


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _quote(value):
    return "'" + str(value).replace("'", "''") + "'"


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def bindir():
    return subprocess.run([PG_CONFIG, "--bindir"], check=True, capture_output=True,
                          text=True).stdout.strip()


def reap_stale(log=print):
    """Stop and remove clusters left by harness runs that no longer exist."""
    for d in glob.glob(os.path.join(tempfile.gettempdir(), DIR_PREFIX + "*")):
        try:
            with open(os.path.join(d, "owner")) as f:
                owner = int(f.read().strip())
        except (OSError, ValueError):
            continue
        if _pid_alive(owner):
            continue
        log(f"removing stale benchmark cluster {d} (its harness, pid {owner}, is gone)")
        Cluster._stop_dir(d, bindir())
        shutil.rmtree(d, ignore_errors=True)


class ClusterError(RuntimeError):
    pass


class Cluster:
    """One throwaway cluster.  Use as a context manager: the server is stopped and its
    directory removed on leaving the block, whatever happened inside."""

    def __init__(self, settings, preload="abtree"):
        self.settings = dict(settings)
        self.preload = preload
        self.notes = []          # things the report must mention (e.g. preload fallback)
        self.dir = None
        self.port = None
        self.bindir = bindir()
        self._cpu_before_restarts = 0.0

    # -- lifecycle ---------------------------------------------------------------------
    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        self.dir = tempfile.mkdtemp(prefix=DIR_PREFIX)
        with open(os.path.join(self.dir, "owner"), "w") as f:
            f.write(f"{os.getpid()}\n")
        if _is_root():
            pg = pwd.getpwnam("postgres")
            os.chown(self.dir, pg.pw_uid, pg.pw_gid)
        self.port = _free_port()
        initdb = subprocess.run(
            _as_server_user([os.path.join(self.bindir, "initdb"), "-D", self.datadir,
                             "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8",
                             "--locale=C.UTF-8"]),
            capture_output=True, text=True)
        if initdb.returncode != 0:
            raise ClusterError("initdb failed:\n" + initdb.stdout + initdb.stderr)
        with open(os.path.join(self.datadir, "postgresql.conf"), "a") as f:
            f.write("\ninclude 'bench.conf'\n")
        self._write_conf()
        if self._pg_ctl("start") == 0:
            return
        if not self.preload:
            raise ClusterError("server did not start:\n" + self.log_tail())
        self.notes.append(
            f"The server did not start with shared_preload_libraries = '{self.preload}', so "
            "this run has no abtree preload (variants that need abtree are skipped). Log:\n\n"
            + "\n".join("    " + line for line in self.log_tail(8).splitlines()))
        self.preload = None
        self._write_conf()
        if self._pg_ctl("start") != 0:
            raise ClusterError("server did not start, even without the preload:\n"
                               + self.log_tail())

    def restart(self, **changes):
        """Change settings (shared_buffers=..., ...) and restart; shared buffers start cold."""
        self.settings.update({k: str(v) for k, v in changes.items()})
        self._write_conf()
        self._cpu_before_restarts += self._server_cpu()
        if self._pg_ctl("restart", "-m", "fast") != 0:
            raise ClusterError("restart failed:\n" + self.log_tail())

    def stop(self):
        if not self.dir:
            return
        d, self.dir = self.dir, None
        # A second Ctrl-C must not interrupt the shutdown it asked for.
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            self._stop_dir(d, self.bindir)
            shutil.rmtree(d, ignore_errors=True)
        finally:
            signal.signal(signal.SIGINT, old)

    @staticmethod
    def _stop_dir(d, bin_dir):
        data = os.path.join(d, "data")
        if not os.path.exists(os.path.join(data, "postmaster.pid")):
            return
        pg_ctl = os.path.join(bin_dir, "pg_ctl")
        for mode in ("fast", "immediate"):
            r = subprocess.run(_as_server_user([pg_ctl, "-D", data, "-m", mode, "-w", "-t", "60",
                                                "stop"]),
                               capture_output=True, start_new_session=True)
            if r.returncode == 0:
                return

    # -- helpers -----------------------------------------------------------------------
    @property
    def datadir(self):
        return os.path.join(self.dir, "data")

    def conf_lines(self):
        """Exactly what the harness wrote into bench.conf (besides port and socket)."""
        lines = [f"{k} = {_quote(v)}" for k, v in self.settings.items()]
        if self.preload:
            lines.insert(0, f"shared_preload_libraries = {_quote(self.preload)}")
        return lines

    def _write_conf(self):
        path = os.path.join(self.datadir, "bench.conf")
        with open(path, "w") as f:
            f.write(f"port = {self.port}\nlisten_addresses = ''\n"
                    f"unix_socket_directories = {_quote(self.dir)}\n")
            f.write("\n".join(self.conf_lines()) + "\n")
        if _is_root():
            pg = pwd.getpwnam("postgres")
            os.chown(path, pg.pw_uid, pg.pw_gid)

    def _pg_ctl(self, action, *args):
        cmd = [os.path.join(self.bindir, "pg_ctl"), "-D", self.datadir,
               "-l", os.path.join(self.dir, "server.log"), "-w", "-t", "120", *args, action]
        # A session of its own: Ctrl-C on the terminal must not reach the postmaster.
        return subprocess.run(_as_server_user(cmd), capture_output=True,
                              start_new_session=True).returncode

    def cpu_seconds(self):
        """CPU time the server's processes used since start, restarts included: the
        postmaster's own and its reaped children's, plus its live children's."""
        return self._cpu_before_restarts + self._server_cpu()

    def _server_cpu(self):
        try:
            with open(os.path.join(self.datadir, "postmaster.pid")) as f:
                pm = int(f.readline())
        except (OSError, ValueError):
            return 0.0
        total = 0
        for stat in glob.glob("/proc/[0-9]*/stat"):
            try:
                with open(stat) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            pid, ppid = int(stat.split("/")[2]), int(fields[1])
            if pid == pm:       # utime, stime, cutime, cstime
                total += sum(int(x) for x in fields[11:15])
            elif ppid == pm:    # utime, stime
                total += sum(int(x) for x in fields[11:13])
        return total / os.sysconf("SC_CLK_TCK")

    def log_tail(self, n=30):
        try:
            with open(os.path.join(self.dir, "server.log"), errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except (OSError, TypeError):
            return "(no server log)"

    def connect(self, dbname="postgres"):
        conn = psycopg2.connect(host=self.dir, port=self.port, user="postgres", dbname=dbname)
        conn.autocommit = True
        return conn

    def client_env(self, dbname="postgres"):
        """Environment for client programs (pgbench, psql) run against this cluster."""
        env = dict(os.environ)
        env.update(PGHOST=self.dir, PGPORT=str(self.port), PGUSER="postgres", PGDATABASE=dbname)
        return env
