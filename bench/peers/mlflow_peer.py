"""An MLflow tracking server (the peers venv's `mlflow server`) on 127.0.0.1 with a PostgreSQL
backend store: a database of its own (mlflow_bench) in the bench's PostgreSQL cluster, so that
both products write to the same PostgreSQL. Its REST API is driven with the standard library,
as Podium's is, with request bodies encoded before any clock starts."""

import os
import subprocess
import time

from kit.http import Client
from kit.procs import Process, clean_env, free_port
from limits_lib.common import log

DATABASE = "mlflow_bench"
# What MLflow's own client sends per log-batch request: MlflowClient.log_batch splits metrics
# into chunks of MAX_METRICS_PER_BATCH (mlflow/utils/validation.py, 1000 in MLflow 3.17.2), and
# the REST API refuses more than 1000 metrics in one request.
METRICS_PER_BATCH = 1000
# MLflow's default number of server workers (`mlflow server --workers`, 4 in MLflow 3.17.2).
WORKERS = 4


class MlflowServer:
    def __init__(self, python, psql, tmp, clients, workers=WORKERS):
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
        # SQLAlchemy's default pool (5 connections + 10 overflow per worker, 30 s wait) made
        # MLflow answer 400 "QueuePool limit ... reached" to some of the 32 log-batch clients
        # once its requests took longer than that wait: a failure of the bench's setup, not a
        # figure. Every worker may hold a connection for every client (at most `clients` are in
        # use at once; the bench PostgreSQL allows 300), as Podium's pool holds one per handler.
        self.pool_size = max(1, clients // workers)
        self.max_overflow = clients - self.pool_size
        env = clean_env({"MLFLOW_SQLALCHEMYSTORE_POOL_SIZE": str(self.pool_size),
                         "MLFLOW_SQLALCHEMYSTORE_MAX_OVERFLOW": str(self.max_overflow)})
        log(f"mlflow: starting the tracking server on 127.0.0.1:{self.port} ({workers} workers, "
            f"SQLAlchemy pool {self.pool_size} + {self.max_overflow} overflow each, "
            f"backend {self.store_uri})")
        # Its own process group: the server's workers are stopped with it.
        self.proc = Process("mlflow server", cmd, self.log_path, env=env,
                            new_session=True).start()
        probe = Rest(self.port, timeout=2)

        def healthy():
            try:
                return probe.call("GET", "/health")[0] == 200
            except OSError:
                return False
            finally:
                probe.close()
        # The first start creates the schema (alembic migrations): allow for it.
        try:
            self.proc.wait_until(healthy, 300, "ready (GET /health 200)")
        except RuntimeError:
            self.stop()
            raise
        self.version = Rest(self.port).call("GET", "/version")[1]
        log(f"mlflow: server {self.version} ready")

    def pids(self):
        """The server's processes (the CLI, uvicorn's workers) for CPU accounting."""
        out = subprocess.run(["pgrep", "-g", str(self.proc.pid)], capture_output=True,
                             text=True).stdout.split()
        return [int(p) for p in out]

    def stop(self):
        self.proc.stop(grace=30)


class Rest(Client):
    """One keep-alive HTTP/1.1 connection to the MLflow server (no authentication: MLflow's
    tracking server has none by default)."""

    def __init__(self, port, timeout=120):
        super().__init__(port, token=None, timeout=timeout, who="mlflow")

    def require(self, method, path, body=None, raw=None, query=None):
        return super().require(method, path, body, status=(200,), raw=raw, query=query)

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
