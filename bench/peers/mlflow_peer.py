"""An MLflow tracking server (the peers venv's `mlflow server`) on 127.0.0.1 with a PostgreSQL
backend store: a database of its own (mlflow_bench) in the bench's PostgreSQL cluster, so that
both products write to the same PostgreSQL. Its REST API is driven with the standard library,
as Podium's is, with request bodies encoded before any clock starts."""

import http.client
import json
import os
import signal
import subprocess
import time
import urllib.parse

from limits_lib.common import clean_env, free_port, log

DATABASE = "mlflow_bench"
# What MLflow's own client sends per log-batch request: MlflowClient.log_batch splits metrics
# into chunks of MAX_METRICS_PER_BATCH (mlflow/utils/validation.py, 1000 in MLflow 3.17.2), and
# the REST API refuses more than 1000 metrics in one request.
METRICS_PER_BATCH = 1000
# MLflow's default number of server workers (`mlflow server --workers`, 4 in MLflow 3.17.2).
WORKERS = 4


class MlflowServer:
    def __init__(self, python, psql, tmp, workers=WORKERS):
        if psql.value(f"SELECT count(*) FROM pg_database WHERE datname = '{DATABASE}'") == "0":
            psql.run(f"CREATE DATABASE {DATABASE}")
        self.store_uri = psql.url.rsplit("/", 1)[0] + "/" + DATABASE
        # psycopg2 named explicitly: SQLAlchemy 2.1 maps a bare postgresql:// to psycopg 3, and
        # psycopg2-binary is the driver MLflow's own server image ships.
        self.sqlalchemy_uri = self.store_uri.replace("postgresql://", "postgresql+psycopg2://", 1)
        self.port = free_port()
        self.workers = workers
        self.log_path = os.path.join(tmp, f"mlflow-{self.port}.log")
        artifacts = os.path.join(tmp, "mlflow-artifacts")
        os.makedirs(artifacts, exist_ok=True)
        cmd = [python, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(self.port),
               "--workers", str(workers), "--backend-store-uri", self.sqlalchemy_uri,
               "--default-artifact-root", artifacts,
               # uvicorn's supervisor kills a worker that misses a 5 s health check: on a loaded
               # 2-core machine a busy or still-importing worker does, and the restarts would
               # be counted against MLflow.
               "--uvicorn-opts", "--timeout-worker-healthcheck 120"]
        log(f"mlflow: starting the tracking server on 127.0.0.1:{self.port} ({workers} workers, "
            f"backend {self.store_uri})")
        with open(self.log_path, "w") as out:
            # Its own process group: the server's workers are stopped with it.
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=clean_env(),
                                         start_new_session=True)
        # The first start creates the schema (alembic migrations): allow for it.
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                if Rest(self.port, timeout=2).call("GET", "/health")[0] == 200:
                    self.version = Rest(self.port).call("GET", "/version")[1]
                    log(f"mlflow: server {self.version} ready")
                    return
            except OSError:
                pass
            time.sleep(0.5)
        self.stop()
        with open(self.log_path, errors="replace") as f:
            tail = "".join(f.readlines()[-30:])
        raise RuntimeError(f"mlflow server not ready; log tail:\n{tail}")

    def pids(self):
        """The server's processes (the CLI, uvicorn's workers) for CPU accounting."""
        out = subprocess.run(["pgrep", "-g", str(self.proc.pid)], capture_output=True,
                             text=True).stdout.split()
        return [int(p) for p in out]

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


class Rest:
    """One keep-alive HTTP/1.1 connection to the MLflow server (no authentication: MLflow's
    tracking server has none by default)."""

    def __init__(self, port, timeout=120):
        self.port = port
        self.timeout = timeout
        self.conn = None

    def call(self, method, path, body=None, raw=None, query=None):
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        if query:
            path += "?" + urllib.parse.urlencode(query)
        headers = {"Content-Type": "application/json"} if data is not None else {}
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                                       timeout=self.timeout)
            try:
                self.conn.request(method, path, body=data, headers=headers)
                r = self.conn.getresponse()
                text = r.read()
                break
            except (ConnectionError, http.client.RemoteDisconnected, http.client.BadStatusLine):
                self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise
        if "json" in r.getheader("Content-Type", "") and text:
            return r.status, json.loads(text)
        return r.status, text.decode(errors="replace")

    def require(self, method, path, body=None, raw=None, query=None):
        code, out = self.call(method, path, body, raw=raw, query=query)
        if code != 200:
            raise RuntimeError(f"mlflow {method} {path} -> {code}: {str(out)[:500]}")
        return out

    def experiment(self, name):
        """The id of experiment `name`, created when missing."""
        code, out = self.call("GET", "/api/2.0/mlflow/experiments/get-by-name",
                              query={"experiment_name": name})
        if code == 200:
            return out["experiment"]["experiment_id"]
        return self.require("POST", "/api/2.0/mlflow/experiments/create",
                            {"name": name})["experiment_id"]

    def create_run(self, experiment_id, name):
        return self.require("POST", "/api/2.0/mlflow/runs/create",
                            {"experiment_id": experiment_id, "run_name": name,
                             "start_time": int(time.time() * 1000)})["run"]["info"]["run_id"]

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None
