"""Database outage under load: PostgreSQL stopped as in a crash (pg_ctl stop -m immediate) for
5-30 s, several times, while clients read and write through the API and 4 agents stream the logs
of live reference runs.

Measured per cycle: the latency of every API answer while the database is down (each must be a
503, quickly), /readyz (must fail while down), the time from the database accepting connections
again to the first successful database-backed answer and a passing /readyz (recovery), the
server's database connections and open files (bounded: nothing leaks). At the end the same
line-by-line check as the crash soak: the agents' spools held what they read while the database
was down and delivered it after.
"""

import os
import threading
import time

import common as c
import soak as soak_mod
from common import say
from kit.http import call
from kit.stats import percentile


class Load:
    """Clients that keep calling while the database comes and goes; every answer recorded."""

    def __init__(self, server, threads=4):
        self.server = server
        self.stop = threading.Event()
        self.samples = []  # (start monotonic, seconds, status, kind)
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.client, args=(i,), daemon=True)
                        for i in range(threads)]
        self.threads.append(threading.Thread(target=self.ready_poller, daemon=True))
        self.n = 0

    def record(self, t0, status, kind):
        with self.lock:
            self.samples.append((t0, time.monotonic() - t0, status, kind))

    def client(self, i):
        k = 0
        while not self.stop.is_set():
            k += 1
            t0 = time.monotonic()
            if k % 3 == 0:
                # A write: a dataset row (synthetic, nothing to count on disk).
                st = self.server.api("POST", "/api/v1/datasets",
                                     {"name": "load-%d-%d-%s" % (i, k, os.urandom(3).hex()),
                                      "uri": "synthetic://load", "format": "synthetic"},
                                     timeout=10)[0]
                self.record(t0, st, "write")
            else:
                st = self.server.api("GET", "/api/v1/runs?limit=5", timeout=10)[0]
                self.record(t0, st, "read")
            time.sleep(0.05)

    def ready_poller(self):
        while not self.stop.is_set():
            t0 = time.monotonic()
            st = call(self.server.url, "GET", "/readyz", timeout=10)[0]
            self.record(t0, st, "readyz")
            time.sleep(0.1)

    def start(self):
        for t in self.threads:
            t.start()

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=15)

    def between(self, t_from, t_to, kinds):
        with self.lock:
            return [s for s in self.samples
                    if s[3] in kinds and s[0] >= t_from and s[0] + s[1] <= t_to]


def run(args, work):
    o = soak_mod.Soak(work, 0, args.seed, args.outage_minutes, args.steps,
                      os.path.join(args.pg_root, "outage"))
    o.start()
    server_pid = o.server.proc.pid
    rng = o.rng
    problems = []
    o.top_up()
    # The runs are training (lines flowing) before the first outage.
    c.wait_until(lambda: len([r for r in (o.active_runs() or []) if r["state"] == "running"])
                 >= 1, 120, 1)
    load = Load(o.server)
    load.start()
    time.sleep(3)
    fds_before = c.open_fds(server_pid)
    pool = 16
    max_backends = 0
    down_latencies = []
    recoveries = []
    walls = []
    cycles = 0
    for i in range(args.outages):
        if o.deadline.passed():
            problems.append("time limit reached after %d of %d outages" % (i, args.outages))
            break
        o.top_up()
        down_for = rng.uniform(args.outage_min_seconds, args.outage_max_seconds)
        t_down = time.monotonic()
        o.pg.stop_immediate()
        t_stopped = time.monotonic()
        say("outage %d/%d: database down for %.1f s" % (i + 1, args.outages, down_for))
        time.sleep(max(0.0, down_for - (t_stopped - t_down)))
        t_resume = time.monotonic()
        # The same window in wall-clock time, for the server's access log.
        walls.append((time.time() - (t_resume - t_stopped - 0.2), time.time()))
        o.pg.resume()
        t_up = time.monotonic()  # accepting connections again (pg_ctl start -w returned)
        # Recovered: a database-backed answer and /readyz both succeed.
        d = c.Deadline(60)
        t_rec = None
        while not d.passed():
            ok_api = o.server.api("GET", "/api/v1/runs?limit=1", timeout=5)[0] == 200
            ok_ready = call(o.server.url, "GET", "/readyz", timeout=5)[0] == 200
            if ok_api and ok_ready:
                t_rec = time.monotonic()
                break
            time.sleep(0.05)
        cycles += 1
        # Answers that began once the outage was in effect and ended before the database was
        # being started again.
        down = load.between(t_stopped + 0.2, t_resume, ("read", "write"))
        ready = load.between(t_stopped + 1.0, t_resume, ("readyz",))
        lat = [s[1] * 1000 for s in down]
        down_latencies += lat
        wrong = [s for s in down if s[2] != 503]
        if wrong:
            problems.append("outage %d: %d of %d answers while down were not 503 (e.g. %s)" %
                            (i + 1, len(wrong), len(down), wrong[0][2]))
        if not down:
            problems.append("outage %d: no answer was measured while the database was down" %
                            (i + 1))
        if not ready or any(s[2] == 200 for s in ready):
            problems.append("outage %d: /readyz passed while the database was down (%d polls)" %
                            (i + 1, len(ready)))
        if t_rec is None:
            problems.append("outage %d: not recovered within 60 s of the database's return" %
                            (i + 1))
            rec = 60.0
        else:
            rec = t_rec - t_up
        recoveries.append(rec)
        if not o.server.proc.running():
            problems.append("outage %d: podium-server exited: %s" % (i + 1,
                                                                     o.server.proc.log_tail(20)))
            break
        backends = o.pg.backends(o.db)
        max_backends = max(max_backends, backends)
        say("outage %d: %d answers while down, p99 %.1f ms, max %.1f ms; recovered %.2f s after "
            "the database; %d server connections, %d open files" %
            (i + 1, len(down), percentile(lat, 99, empty=None) or -1, max(lat or [-1]), rec,
             backends, c.open_fds(server_pid)))
        # Load continues between outages: the system must be busy, not idle, when it drops.
        time.sleep(rng.uniform(3, 8))
    load.finish()
    fds_after = c.open_fds(server_pid)
    # Pool + the LISTEN connection + a margin for a connection being replaced.
    if max_backends > pool + 3:
        problems.append("the server held %d database connections (pool %d)" % (max_backends,
                                                                              pool))
    if fds_after > fds_before + 50:
        problems.append("open files of the server grew from %d to %d over the outages" %
                        (fds_before, fds_after))
    ended = o.drain(args.drain_seconds)
    if not ended:
        problems.append("runs still active %d s after the last outage" % args.drain_seconds)
    o.stop_agents()
    res, check_problems, runs, attempts = o.check()
    logs = [p for a in o.agents.values() for p in a.logs] + o.server.logs
    leaks = c.find_secrets(o.secrets, logs)
    o.server.terminate()
    problems = o.failures + problems + check_problems + leaks
    p99 = percentile(down_latencies, 99, empty=None)
    server_side = c.access_log_ms(o.server.logs, ("/api/v1/runs", "/api/v1/datasets"), 503,
                                  walls)
    server_p99 = percentile(server_side, 99, empty=None)
    summary = {
        "cycles": cycles,
        "p99_ms_while_down": round(p99, 1) if p99 is not None else None,
        "recovery_seconds": round(max(recoveries), 2) if recoveries else None,
        "lost": res["lost"],
        # Beside the schema's figures: the same 503s as the server timed them.
        "server_p99_ms_while_down": server_p99,
    }
    details = dict(summary)
    details.update({"answers_while_down": len(down_latencies),
                    # The same answers as the server timed them (access log, request read to
                    # response written): the rest of the client's figure is connecting and
                    # waiting for a CPU on a shared machine.
                    "server_side_503_max_ms": max(server_side) if server_side else None,
                    "max_ms_while_down": round(max(down_latencies), 1) if down_latencies else None,
                    "recovery_seconds_each": [round(r, 2) for r in recoveries],
                    "max_server_db_connections": max_backends,
                    "server_open_files_before_after": [fds_before, fds_after],
                    "lines_checked": res["lines_checked"], "steps_checked": res["steps_checked"],
                    "duplicated": res["duplicated"], "runs": len(runs),
                    "runs_succeeded": sum(1 for r in runs if r["state"] == "succeeded"),
                    "problems": problems[:50]})
    return summary, details, problems
