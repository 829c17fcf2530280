"""Shared parts of the reliability scenarios: processes that are always stopped, a private
PostgreSQL, podium-server and podium-worker processes, a small HTTP client, and the token grep.

Standard library only. Every process a scenario starts is registered in PROCESSES and ended at
exit (atexit and SIGTERM/SIGINT), including the rank processes the agents started, which are
found by the SOAK_TAG variable in their environment (agents pass their environment on).
"""

import atexit
import calendar
import http.client
import json
import math
import os
import pwd
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("PODIUM_BIN_DIR", os.path.join(ROOT, "build", "rel", "bin"))
PG_BIN = os.environ.get("PODIUM_PG_BIN_DIR", "/usr/lib/postgresql/15/bin")
TAG = "rel-%d-%s" % (os.getpid(), os.urandom(4).hex())

PROCESSES = []  # every Proc started, for the exit handler
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


class Proc:
    """One child process with its output in a log file; never outlives the harness."""

    def __init__(self, name, argv, env, log_path, cwd=None):
        self.name, self.argv, self.env, self.log_path, self.cwd = name, argv, env, log_path, cwd
        self.popen = None

    def start(self):
        full = dict(os.environ)
        full.update(self.env)
        log = open(self.log_path, "ab")
        # Own session: a signal meant for the harness's terminal does not reach it first, and
        # the harness decides how it ends.
        self.popen = subprocess.Popen(self.argv, env=full, stdout=log, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, cwd=self.cwd,
                                      start_new_session=True)
        log.close()
        if self not in PROCESSES:
            PROCESSES.append(self)
        return self

    @property
    def pid(self):
        return self.popen.pid if self.popen else None

    def running(self):
        return self.popen is not None and self.popen.poll() is None

    def kill(self):
        """SIGKILL; returns the exit status (negative signal number)."""
        if not self.running():
            return self.popen.returncode if self.popen else None
        self.popen.send_signal(signal.SIGKILL)
        return self.popen.wait(timeout=30)

    def terminate(self, grace=30):
        if not self.running():
            return self.popen.returncode if self.popen else None
        self.popen.send_signal(signal.SIGTERM)
        try:
            return self.popen.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            say("%s did not exit %d s after SIGTERM: SIGKILL" % (self.name, grace))
            return self.kill()

    def log_text(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def log_tail(self, n=30):
        return "\n".join(self.log_text().splitlines()[-n:])


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
    for p in reversed(PROCESSES):
        try:
            if p.running():
                p.kill()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass
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


def rss_mb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def open_fds(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return 0


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def random_token(prefix="pdm_"):
    return prefix + os.urandom(24).hex()


# ---- HTTP ----


def call(base, method, path, body=None, token=None, timeout=10, headers=None):
    """(status, parsed JSON or None, raw bytes, headers dict); status 0 when no answer."""
    u = urllib.parse.urlsplit(base)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    h = dict(headers or {})
    if token:
        h["Authorization"] = "Bearer " + token
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    try:
        c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        raw = r.read()
        try:
            j = json.loads(raw) if raw else None
        except ValueError:
            j = None
        return r.status, j, raw, {k.lower(): v for k, v in r.getheaders()}
    except (OSError, http.client.HTTPException) as e:
        return 0, None, str(e).encode(), {}
    finally:
        c.close()


def require(result, status, what):
    if result[0] != status:
        raise RuntimeError("%s: expected %d, got %d: %s" % (what, status, result[0],
                                                             result[2][:500]))
    return result[1]


# ---- PostgreSQL ----


class Postgres:
    """A private cluster through scripts/test-postgres.sh, in a directory of this harness."""

    def __init__(self, directory):
        self.dir = directory
        self.env = {"PODIUM_TEST_PG_DIR": directory}
        self.url = None

    def _script(self, *args):
        env = dict(os.environ)
        env.update(self.env)
        r = subprocess.run([os.path.join(ROOT, "scripts", "test-postgres.sh")] + list(args),
                           env=env, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise RuntimeError("test-postgres.sh %s failed: %s" % (" ".join(args), r.stderr))
        return r.stdout.strip()

    def start(self):
        self.url = self._script("start")
        CLEANUPS.append(self.destroy)
        # test-postgres.sh trades durability for speed (synchronous_commit off): a commit is
        # acknowledged before its WAL is written, so crashing the database (stop_immediate)
        # would lose what Podium had been told was stored. A real deployment commits
        # synchronously; so does this cluster. (fsync stays off: the operating system, whose
        # page cache holds the WAL, does not crash here.)
        self.psql("postgres", "ALTER SYSTEM SET synchronous_commit = on")
        self.psql("postgres", "SELECT pg_reload_conf()")
        return self.url

    def server_url(self, database):
        return self.url.rsplit("/", 1)[0] + "/" + database

    def create_database(self, name):
        self.psql("postgres", "CREATE DATABASE %s" % name)
        return self.server_url(name)

    def psql(self, database, sql, timeout=120):
        r = subprocess.run(["psql", "-X", "-At", "-v", "ON_ERROR_STOP=1",
                            self.server_url(database), "-c", sql],
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
        return self._script("resume")

    def destroy(self):
        try:
            self._script("stop")
        except Exception as e:  # noqa: BLE001
            say("stopping PostgreSQL in", self.dir, "failed:", e)

    def backends(self, database):
        """Connections the server holds to `database` (its pool, the LISTEN connection)."""
        out = self.psql("postgres", "SELECT count(*) FROM pg_stat_activity WHERE datname = '%s' "
                                    "AND application_name = 'podium-server'" % database)
        return int(out.strip() or 0)


# ---- Podium processes ----


class Server:
    """podium-server on a fixed port (agents keep their --server URL across restarts)."""

    def __init__(self, workdir, database_url, admin_token, settings=(), port=None, env=None):
        self.workdir = workdir
        self.database_url = database_url
        self.admin_token = admin_token
        self.settings = list(settings)
        self.port = port or free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.extra_env = dict(env or {})
        self.generation = 0
        self.proc = None
        self.logs = []
        os.makedirs(workdir, exist_ok=True)

    def start(self, ready_seconds=90):
        self.generation += 1
        argv = [os.path.join(BIN, "podium-server"), "--listen", "127.0.0.1:%d" % self.port,
                "--database-url", self.database_url, "--data-dir",
                os.path.join(self.workdir, "data")]
        for s in self.settings:
            argv += ["--set", s]
        log = os.path.join(self.workdir, "server-%d.log" % self.generation)
        self.logs.append(log)
        env = {"PODIUM_ADMIN_TOKEN": self.admin_token, "SOAK_TAG": TAG}
        env.update(self.extra_env)
        self.proc = Proc("server", argv, env, log).start()
        d = Deadline(ready_seconds)
        while not d.passed():
            if "podium-server listening on" in self.proc.log_text():
                return self
            if not self.proc.running():
                raise RuntimeError("podium-server exited (%s) before it was ready:\n%s" %
                                   (self.proc.popen.returncode, self.proc.log_tail(40)))
            time.sleep(0.02)
        self.proc.kill()
        raise RuntimeError("podium-server not ready within %d s:\n%s" %
                           (ready_seconds, self.proc.log_tail(40)))

    def kill(self):
        return self.proc.kill()

    def terminate(self):
        return self.proc.terminate(grace=40)

    def api(self, method, path, body=None, token=None, timeout=10):
        return call(self.url, method, path, body, token or self.admin_token, timeout)


_HELP = {}


def worker_supports(flag):
    if "text" not in _HELP:
        r = subprocess.run([os.path.join(BIN, "podium-worker"), "--help"], capture_output=True,
                           text=True, timeout=30)
        _HELP["text"] = r.stdout + r.stderr
    return flag in _HELP["text"]


class Agent:
    """podium-worker for one (slice, host), its token in the environment (never in argv)."""

    def __init__(self, workdir, server_url, token, cluster, slice_, host, env=None):
        self.workdir, self.server_url, self.token = workdir, server_url, token
        self.cluster, self.slice, self.host = cluster, slice_, host
        self.name = "agent-s%dh%d" % (slice_, host)
        self.env = dict(env or {})
        self.generation = 0
        self.proc = None
        self.logs = []
        os.makedirs(workdir, exist_ok=True)

    def start(self):
        self.generation += 1
        # At nice 10, and so are the ranks it starts: on a real cluster agents and training run
        # on other machines than the server; here they share two cores with it, and the figures
        # measured are the server's (its answers while the database is down, /healthz under
        # attack), not how it fares against four training processes for the same CPU.
        argv = ["nice", "-n", "10",
                os.path.join(BIN, "podium-worker"), "--server", self.server_url, "--cluster",
                self.cluster, "--slice", str(self.slice), "--host", str(self.host), "--workdir",
                self.workdir, "--address", "127.0.0.1", "--metadata-url", "none"]
        # A root agent must be told whom its ranks run as: this harness's own account.
        if os.geteuid() == 0 and worker_supports("--run-as"):
            argv += ["--run-as", pwd.getpwuid(os.geteuid()).pw_name]
        env = {"PODIUM_TOKEN": self.token, "SOAK_TAG": TAG, "OMP_NUM_THREADS": "1",
               "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}
        env.update(self.env)
        log = os.path.join(self.workdir, "..", "%s-%d.log" % (self.name, self.generation))
        log = os.path.normpath(log)
        self.logs.append(log)
        self.proc = Proc(self.name, argv, env, log).start()
        return self

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


def percentile(values, p):
    if not values:
        return None
    # Nearest rank: the smallest value with at least p% of the values at or below it.
    v = sorted(values)
    k = max(0, min(len(v) - 1, math.ceil(p / 100.0 * len(v)) - 1))
    return v[k]


def git_commit():
    r = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip()


STEP_RE = re.compile(r"^completed step: (\d+), ")


def step_of(line):
    m = STEP_RE.match(line)
    return int(m.group(1)) if m else None
