"""podium-server and podium-worker processes of a bench, and where their binaries are.

  server = PodiumServer(bin_dir, tmp, token, database_url=url, settings=["log.level=warn"])
  server.start()                 # on a free port; ready once GET /readyz answers 200
  server.admin.require("GET", "/api/v1/clusters")
  worker = PodiumWorker(bin_dir, server.url, worker_token, cluster, 0, 0, tmp).start()
  worker.stop(); server.stop()
"""

import os
import sys

from . import ROOT
from .http import Client
from .procs import Process, clean_env, current_user, free_port, rss_mb

READY_LINE = "podium-server listening on "
REGISTERED_LINE = r"podium-worker registered as (\S+)"


def find_bin_dir(requested, binaries=("podium-server", "podium-worker"),
                 build_dirs=("build/release/bin", "build-bench/bin", "build/test/bin"),
                 who="bench"):
    """The first of `requested`, $PODIUM_BIN_DIR and ROOT/<build_dirs> holding every binary;
    exits with a message naming them all otherwise."""
    candidates = [requested] if requested else []
    if os.environ.get("PODIUM_BIN_DIR"):
        candidates.append(os.environ["PODIUM_BIN_DIR"])
    candidates += [os.path.join(ROOT, sub) for sub in build_dirs]
    for d in candidates:
        if all(os.access(os.path.join(d, b), os.X_OK) for b in binaries):
            return os.path.abspath(d)
    sys.exit(f"{who}: {' and '.join(binaries)} not found in any of: {', '.join(candidates)} "
             "(build them, or pass --bin-dir)")


class PodiumServer:
    """podium-server on 127.0.0.1 with --data-dir <workdir>/data (the embedded PostgreSQL's
    when database_url is empty) and the admin token in its environment (never in argv, where
    ps shows it). The port is free_port()'s unless given, and stays across restarts (agents
    keep their --server URL). Each start logs to <workdir>/<name>-<port>[-N].log.

    env: the child's environment (default: this one without PODIUM_*); PODIUM_ADMIN_TOKEN is
    added."""

    def __init__(self, bin_dir, workdir, token, database_url="", settings=(), port=None,
                 env=None, name="server", new_session=False):
        self.bin_dir, self.workdir, self.token = bin_dir, workdir, token
        self.database_url = database_url
        self.settings = list(settings)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = env
        self.name = name
        self.new_session = new_session
        self.starts = 0
        self.proc = None
        self.logs = []
        self.admin = Client(self.port, token)
        os.makedirs(workdir, exist_ok=True)

    def argv(self):
        argv = [os.path.join(self.bin_dir, "podium-server"), "--listen",
                f"127.0.0.1:{self.port}", "--data-dir", os.path.join(self.workdir, "data")]
        if self.database_url:
            argv += ["--database-url", self.database_url]
        for s in self.settings:
            argv += ["--set", s]
        return argv

    def spawn(self):
        """Starts the process; returns at once (wait_ready() waits)."""
        self.starts += 1
        suffix = "" if self.starts == 1 else f"-{self.starts}"
        log = os.path.join(self.workdir, f"{self.name}-{self.port}{suffix}.log")
        self.logs.append(log)
        env = dict(clean_env() if self.env is None else self.env, PODIUM_ADMIN_TOKEN=self.token)
        self.proc = Process(self.name, self.argv(), log, env=env,
                            new_session=self.new_session).start()
        return self

    def wait_ready(self, timeout=120):
        """Until GET /readyz answers 200 (the server listens and reaches its database)."""
        probe = Client(self.port, timeout=2)

        def ready():
            try:
                return probe.call("GET", "/readyz")[0] == 200
            except OSError:
                return False
            finally:
                probe.close()
        self.proc.wait_until(ready, timeout, "ready (GET /readyz 200)")
        return self

    def start(self, timeout=120):
        return self.spawn().wait_ready(timeout)

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def running(self):
        return self.proc is not None and self.proc.running()

    def rss_mb(self):
        return rss_mb(self.pid)

    def stop(self, grace=30):
        self.admin.close()
        return self.proc.stop(grace) if self.proc else None

    def kill(self):
        self.admin.close()
        return self.proc.kill() if self.proc else None

    def log_tail(self, n=30):
        return self.proc.log_tail(n) if self.proc else ""


class PodiumWorker:
    """podium-worker for one (cluster, slice, host) with its token in the environment, its
    ranks run as this account. Each start logs to <log_dir>/<name>-N.log.

    prefix: argv before the binary (e.g. ["nice", "-n", "10"]); env: added to the environment
    (the ranks it starts inherit it), which is this one without PODIUM_* unless inherit_env."""

    def __init__(self, bin_dir, server_url, token, cluster, slice_, host, workdir, log_dir=None,
                 extra_args=(), env=None, prefix=(), name=None, new_session=False,
                 inherit_env=False):
        self.bin_dir, self.server_url, self.token = bin_dir, server_url, token
        self.cluster, self.slice, self.host = cluster, slice_, host
        self.workdir = workdir
        self.log_dir = log_dir or os.path.dirname(os.path.abspath(workdir))
        self.extra_args, self.env, self.prefix = list(extra_args), dict(env or {}), list(prefix)
        self.name = name or f"agent-s{slice_}h{host}"
        self.new_session, self.inherit_env = new_session, inherit_env
        self.starts = 0
        self.proc = None
        self.logs = []
        self.worker_id = None
        os.makedirs(workdir, exist_ok=True)

    def spawn(self):
        self.starts += 1
        argv = self.prefix + [
            os.path.join(self.bin_dir, "podium-worker"), "--server", self.server_url,
            "--cluster", self.cluster, "--slice", str(self.slice), "--host", str(self.host),
            "--workdir", self.workdir, "--address", "127.0.0.1",
            # A root agent must be told whom its ranks run as (engine/worker/run_as.h).
            "--run-as", current_user()] + self.extra_args
        log = os.path.join(self.log_dir, f"{self.name}-{self.starts}.log")
        self.logs.append(log)
        env = dict(os.environ if self.inherit_env else clean_env(), **self.env,
                   PODIUM_TOKEN=self.token)
        self.proc = Process(self.name, argv, log, env=env, new_session=self.new_session).start()
        return self

    def wait_registered(self, timeout=60):
        """Until it printed "podium-worker registered as <id>"; sets worker_id."""
        self.worker_id = self.proc.wait_for_line(REGISTERED_LINE, timeout,
                                                 "registered").group(1)
        return self

    def start(self, timeout=60):
        return self.spawn().wait_registered(timeout)

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def running(self):
        return self.proc is not None and self.proc.running()

    def stop(self, grace=30):
        return self.proc.stop(grace) if self.proc else None

    def kill(self):
        return self.proc.kill() if self.proc else None

    def log_tail(self, n=30):
        return self.proc.log_tail(n) if self.proc else ""
