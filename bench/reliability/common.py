"""Shared parts of the reliability scenarios: a private PostgreSQL, podium-server and
podium-worker processes (the bench kit's, bench/kit), processes that are always stopped, and the
token grep.

Standard library only. Every process a scenario starts is stopped at exit (atexit and
SIGTERM/SIGINT), including the rank processes the agents started, which are found by the
SOAK_TAG variable in their environment (agents pass their environment on).
"""

import atexit
import calendar
import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from kit import ROOT  # noqa: E402
from kit.http import call  # noqa: E402
from kit.podium import PodiumServer, PodiumWorker  # noqa: E402
from kit.postgres import TestPostgres  # noqa: E402
from kit.procs import kill_started  # noqa: E402

BIN = os.environ.get("PODIUM_BIN_DIR", os.path.join(ROOT, "build", "rel", "bin"))
PG_BIN = os.environ.get("PODIUM_PG_BIN_DIR", "/usr/lib/postgresql/15/bin")
TAG = "rel-%d-%s" % (os.getpid(), os.urandom(4).hex())

CLEANUPS = []  # callables run at exit (PostgreSQL clusters)


def say(*parts):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), " ".join(str(p) for p in parts)), flush=True)


class Deadline:
    """A bound on a loop: every wait in the harness has one."""

    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def left(self):
        return self.end - time.monotonic()

    def passed(self):
        return self.left() <= 0


def wait_until(pred, seconds, every=0.1):
    d = Deadline(seconds)
    while True:
        v = pred()
        if v:
            return v
        if d.passed():
            return v
        time.sleep(every)


# ---- processes ----


def tagged_processes(tag=TAG):
    """Pids whose environment has SOAK_TAG=tag (agents and every rank they started)."""
    want = ("SOAK_TAG=" + tag).encode()
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % d, "rb") as f:
                if want in f.read().split(b"\0"):
                    out.append(int(d))
        except OSError:
            pass
    return out


def kill_group_and_pid(pid):
    for target in (-pid, pid):
        try:
            os.kill(target, signal.SIGKILL)
        except OSError:
            pass


def stop_everything():
    kill_started()
    for pid in tagged_processes():
        kill_group_and_pid(pid)
    while CLEANUPS:
        try:
            CLEANUPS.pop()()
        except Exception as e:  # noqa: BLE001
            say("cleanup failed:", e)


def _on_signal(signum, _frame):
    say("signal %d: stopping everything" % signum)
    stop_everything()
    sys.exit(128 + signum)


def install_exit_handlers():
    atexit.register(stop_everything)
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)


def open_fds(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return 0


def random_token(prefix="pdm_"):
    return prefix + os.urandom(24).hex()


# ---- HTTP (kit.http.call answers) ----


def require(result, status, what):
    if result[0] != status:
        raise RuntimeError("%s: expected %d, got %d: %s" % (what, status, result[0],
                                                             result[2][:500]))
    return result[1]


# ---- PostgreSQL ----


class Postgres(TestPostgres):
    """A private cluster through scripts/test-postgres.sh, in a directory of this harness,
    destroyed at exit."""

    def start(self):
        super().start()
        CLEANUPS.append(self.destroy)
        # test-postgres.sh trades durability for speed (synchronous_commit off): a commit is
        # acknowledged before its WAL is written, so crashing the database (stop_immediate)
        # would lose what Podium had been told was stored. A real deployment commits
        # synchronously; so does this cluster. (fsync stays off: the operating system, whose
        # page cache holds the WAL, does not crash here.)
        self.psql("postgres", "ALTER SYSTEM SET synchronous_commit = on")
        self.psql("postgres", "SELECT pg_reload_conf()")
        return self.url

    def create_database(self, name):
        self.psql("postgres", "CREATE DATABASE %s" % name)
        return self.database_url(name)

    def psql(self, database, sql, timeout=120):
        r = subprocess.run(["psql", "-X", "-At", "-v", "ON_ERROR_STOP=1",
                            self.database_url(database), "-c", sql],
                           capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError("psql failed: %s\n%s" % (sql[:200], r.stderr))
        return r.stdout

    def query_json(self, database, sql):
        """Rows of `sql` as a list of dicts (one json_agg round trip)."""
        out = self.psql(database, "SELECT coalesce(json_agg(t), '[]'::json) FROM (%s) t" % sql)
        return json.loads(out)

    def data_dir(self):
        # test-postgres.sh keeps the cluster in the directory it was given (short /tmp paths).
        return os.path.join(self.dir, "data")

    def stop_immediate(self):
        """The database disappears as in a crash: no checkpoint, connections cut."""
        argv = [os.path.join(PG_BIN, "pg_ctl"), "stop", "-D", self.data_dir(), "-m", "immediate",
                "-w"]
        if os.geteuid() == 0:
            argv = ["runuser", "-u", "postgres", "--"] + argv
        subprocess.run(argv, capture_output=True, timeout=60, cwd="/")

    def resume(self):
        return self.run("resume")

    def destroy(self):
        try:
            self.run("stop")
        except Exception as e:  # noqa: BLE001
            say("stopping PostgreSQL in", self.dir, "failed:", e)

    def backends(self, database):
        """Connections the server holds to `database` (its pool, the LISTEN connection)."""
        out = self.psql("postgres", "SELECT count(*) FROM pg_stat_activity WHERE datname = '%s' "
                                    "AND application_name = 'podium-server'" % database)
        return int(out.strip() or 0)


# ---- Podium processes ----


class Server(PodiumServer):
    """podium-server on a fixed port (agents keep their --server URL across restarts), tagged,
    in a session of its own."""

    def __init__(self, workdir, database_url, admin_token, settings=(), port=None, env=None):
        super().__init__(BIN, workdir, admin_token, database_url=database_url, settings=settings,
                         port=port, env=dict(os.environ, SOAK_TAG=TAG, **(env or {})),
                         new_session=True)
        self.admin_token = admin_token

    def start(self, ready_seconds=90):
        return super().start(ready_seconds)

    def terminate(self):
        return self.stop(grace=40)

    def api(self, method, path, body=None, token=None, timeout=10):
        return call(self.url, method, path, body, token or self.admin_token, timeout)


class Agent(PodiumWorker):
    """podium-worker for one (slice, host), its token in the environment (never in argv)."""

    def __init__(self, workdir, server_url, token, cluster, slice_, host, env=None):
        # At nice 10, and so are the ranks it starts: on a real cluster agents and training run
        # on other machines than the server; here they share two cores with it, and the figures
        # measured are the server's (its answers while the database is down, /healthz under
        # attack), not how it fares against four training processes for the same CPU.
        super().__init__(BIN, server_url, token, cluster, slice_, host, workdir,
                         extra_args=["--metadata-url", "none"],
                         env=dict({"SOAK_TAG": TAG, "OMP_NUM_THREADS": "1",
                                   "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"},
                                  **(env or {})),
                         prefix=["nice", "-n", "10"], inherit_env=True, new_session=True)

    def start(self):
        """Started; the scenario waits for the hosts to be healthy (not for the log line)."""
        return self.spawn()

    def rank_pids(self):
        """Rank processes of this agent: tagged processes whose parent chain leads here."""
        out = []
        if not self.proc or not self.proc.running():
            return out
        for pid in tagged_processes():
            if pid == self.proc.pid:
                continue
            try:
                with open("/proc/%d/stat" % pid) as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == self.proc.pid:
                out.append(pid)
        return out

    def kill_host(self):
        """The host dies: the agent and every rank it started, with SIGKILL."""
        ranks = self.rank_pids()
        self.proc.kill()
        for pid in ranks:
            kill_group_and_pid(pid)
        return ranks

    def local_path(self, attempt_id, rank):
        return os.path.join(self.workdir, "logs", attempt_id, "rank-%d.log" % rank)

    def local_lines(self, attempt_id, rank):
        """What the agent read from the rank (its kept copy, logs/<attempt>/rank-<r>.log)."""
        path = self.local_path(attempt_id, rank)
        try:
            with open(path, "rb") as f:
                text = f.read().decode("utf-8")
        except OSError:
            return None
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return lines


# ---- secrets never shown ----


def find_secrets(secrets, files=(), check_ps=True):
    """Where any of `secrets` appears: in `files` (logs) or in a process's command line.
    Returns a list of "where: which" strings (empty: none found)."""
    found = []
    secrets = [s for s in secrets if s]
    for path in files:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        for s in secrets:
            if s.encode() in data:
                found.append("%s contains a secret starting %s" % (path, s[:8]))
    if check_ps:
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    cmd = f.read()
            except OSError:
                continue
            for s in secrets:
                if s.encode() in cmd:
                    found.append("the command line of pid %s contains a secret starting %s" %
                                 (d, s[:8]))
    return found


def access_log_ms(logs, paths, status, windows=None):
    """duration_ms (request read to response written) of every answer with `status` to one of
    `paths` in the server's JSON access log: how fast the server itself answered, apart from
    connecting and waiting for a CPU on a shared machine. With `windows` ([(from, to)] in epoch
    seconds), only answers logged within one of them."""
    out = []
    want = '"status":%d' % status
    for path in logs:
        try:
            with open(path, errors="replace") as f:
                for line in f:
                    if want not in line:
                        continue
                    try:
                        e = json.loads(line)["event"]
                    except (ValueError, KeyError, TypeError):
                        continue
                    if e.get("path") not in paths or e.get("status") != status:
                        continue
                    if windows is not None:
                        t = epoch_of(json.loads(line).get("ts", ""))
                        if t is None or not any(a <= t <= b for a, b in windows):
                            continue
                    out.append(round(float(e["duration_ms"]), 3))
        except OSError:
            pass
    return out


def epoch_of(rfc3339):
    """Epoch seconds of the server log's "2026-11-25T12:39:32.686815Z", None if unreadable."""
    try:
        whole, _, frac = rfc3339.rstrip("Z").partition(".")
        t = calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S"))
        return t + (float("0." + frac) if frac else 0.0)
    except ValueError:
        return None


STEP_RE = re.compile(r"^completed step: (\d+), ")


def step_of(line):
    m = STEP_RE.match(line)
    return int(m.group(1)) if m else None
