#!/usr/bin/python3
"""Profile swr(10000) under an old snapshot: bench/profile/old_snapshot_profile.py after|busy [ROWS] [SECONDS]

A throwaway cluster like bench/old_snapshot_sampling.py's (the installed build of abtree), table
a(x, y) of 1M rows with an abtree index on y; a REPEATABLE READ snapshot is taken, then two
sessions insert 100-row statements that it cannot see.  `after`: they insert ROWS rows (default
2,100,000, what that benchmark's busy phases added at f7c4692) and stop, then the sampler's
backend runs `SELECT count(*) FROM a TABLESAMPLE swr(10000)` in a loop while
`perf record -g -p <its pid>` runs for SECONDS (default 8).  `busy`: the same while the two keep
inserting (2 seconds after they start).  Prints the EXPLAIN ANALYZE of one query under the
snapshot (draws, rejections, descents) and the top functions (perf report --no-children).
With WAITS=1 in the environment perf records the sampler's scheduler switches instead
(sched:sched_switch, DWARF call graphs), and lock_waits.py prints where it slept on a lock.
Used for bench/results/old_snapshot_profile.md.  Run as root; needs perf.
"""

import os
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from harness.cluster import Cluster  # noqa: E402
from harness.old_snapshot import QUERY, SETTINGS, insert_sql, load, old_snapshot, run  # noqa: E402


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "after"
    target = int(sys.argv[2]) if len(sys.argv) > 2 else 2_100_000
    seconds = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    with Cluster(SETTINGS) as cl:
        c = load(cl, 1_000_000)
        s = old_snapshot(cl)
        pid = run(s, "SELECT pg_backend_pid()")[0][0]
        state = {"rows": 0, "stop": False}

        def insert(k):
            cc = cl.connect()
            salt = k * 1_000_003
            while not state["stop"] and (mode == "busy" or state["rows"] < target):
                salt += 7919
                run(cc, insert_sql(salt, 100))
                state["rows"] += 100
            cc.close()

        threads = [threading.Thread(target=insert, args=(k,)) for k in (1, 2)]
        for t in threads:
            t.start()
        if mode == "busy":
            time.sleep(2)
        else:
            for t in threads:
                t.join()
        plan = run(s, "EXPLAIN (ANALYZE) " + QUERY)
        print("\n".join(r[0] for r in plan))
        data = f"/tmp/old_snapshot_{mode}.perf"
        waits = os.environ.get("WAITS") == "1"
        events = ["-e", "sched:sched_switch", "--call-graph", "dwarf,16384"] if waits else ["-g"]
        perf = subprocess.Popen(["perf", "record"] + events + ["-o", data, "-p", str(pid), "--",
                                 "sleep", str(seconds)], stderr=subprocess.DEVNULL)
        queries = 0
        t0 = time.monotonic()
        while perf.poll() is None:
            run(s, QUERY)
            queries += 1
        print(f"{queries} queries, {1000 * (time.monotonic() - t0) / max(queries, 1):.1f} ms each")
        state["stop"] = True
        for t in threads:
            t.join()
        print(f"rows the snapshot cannot see: {state['rows']:,}")
        print(run(c, "SELECT * FROM abtree_mvstore()"))
        run(s, "COMMIT")
        if waits:
            subprocess.run([sys.executable,
                            os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                         "lock_waits.py"), data])
        else:
            subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "symbol",
                            "--stdio", "-g", "none", "--percent-limit", "1.5"])


if __name__ == "__main__":
    main()
