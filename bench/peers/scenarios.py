"""Issue 31's peer scenarios: Podium beside an MLflow tracking server (PostgreSQL backend store
in the bench's own PostgreSQL) and beside Aim (its own storage), in the same invocation, on the
same workload:

  peer_mlflow_ingest   32 clients log-batch the 5 metrics of 10,000 steps each (MLflow's client
                       batch: 1,000 metrics per request) / 32 agents post the same steps as
                       MaxText step lines (500 per batch): metric values committed per second
  peer_mlflow_history  one run's whole history, 10,000 steps x 5 metrics: MLflow get-history of
                       each key / Podium GET /runs/{id}/metrics: p50 and p99
  peer_mlflow_search   a page of 100 runs among 10,000, filtered on a parameter and a metric
                       (MLflow runs/search) / on the parameter (Podium GET /runs?model=: it has
                       no metric filter): p50 and p99
  peer_aim_ingest, peer_aim_history   the same ingest and history against Aim

Every ratio is oriented so that > 1 means Podium is better: throughput Podium / peer, latency
peer / Podium. The value is Podium's figure, the baseline the peer's."""

import json
import os
import random
import subprocess
import time

from kit.http import Client
from kit.results import scenario
from kit.stats import percentile
from limits_lib.common import log

from . import mlflow_seed, podium_side, venv, workload
from .mlflow_peer import METRICS_PER_BATCH, MlflowServer, Rest

NAMES = ["peer_mlflow_ingest", "peer_mlflow_history", "peer_mlflow_search", "peer_aim_ingest",
         "peer_aim_history"]
TARGET_INGEST = 10.0
TARGET_QUERY = 5.0
ORIENTATION = "> 1 means Podium better (throughput Podium/peer, latency peer/Podium)"
HERE = os.path.dirname(os.path.abspath(__file__))


def _cpu_seconds(pids):
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            pass
    return total / tick


def _machine_busy():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")  # all but idle and iowait


def _latency_row(name, podium, peer, peer_label, **details):
    ratio99 = peer["p99_ms"] / podium["p99_ms"]
    ratio50 = peer["p50_ms"] / podium["p50_ms"]
    meets = ratio99 >= TARGET_QUERY and ratio50 >= TARGET_QUERY
    log(f"{name}: Podium p50 {podium['p50_ms']:.1f} ms p99 {podium['p99_ms']:.1f} ms; "
        f"{peer_label} p50 {peer['p50_ms']:.1f} ms p99 {peer['p99_ms']:.1f} ms; "
        f"{ratio50:.1f}x / {ratio99:.1f}x")
    return scenario(name, podium["p99_ms"], "ms (p99)",
                    f"ratio >= {TARGET_QUERY:g} at p50 and p99 ({peer_label} ms / Podium ms)",
                    meets, baseline_value=peer["p99_ms"], ratio=ratio99,
                    ratio_orientation=ORIENTATION, ratio_p50=ratio50,
                    podium=podium, **{peer_label.lower(): peer}, **details)


def _mlflow_ingest(server, psql_mlflow, clients, steps, budget_s):
    """32 clients each send their log-batch requests one after another until their steps or
    budget_s run out (MLflow takes about 2.5 s per request of 1,000 metrics on this machine: the
    whole workload would take over an hour). Returns the figures; the rate is the rows committed
    over the time until the last request returned."""
    rest = Rest(server.port)
    exp = rest.experiment(f"peer-ingest-{os.urandom(3).hex()}")
    runs = [rest.create_run(exp, f"ingest-{k}") for k in range(clients)]
    t0_ms = int(time.time() * 1000)
    bodies = [workload.mlflow_bodies(runs[k], steps, k, t0_ms, METRICS_PER_BATCH)
              for k in range(clients)]
    log(f"mlflow ingest: {clients} clients x up to {steps:,} steps x {len(workload.METRIC_KEYS)}"
        f" metrics (log-batch requests of {METRICS_PER_BATCH} metrics), for at most "
        f"{budget_s} s")
    conns = [Rest(server.port) for _ in range(clients)]
    sent = [0] * clients
    t_start = time.monotonic()
    last = [t_start]

    def client(k):
        for body in bodies[k]:
            if time.monotonic() - t_start >= budget_s:
                return
            conns[k].require("POST", "/api/2.0/mlflow/runs/log-batch", raw=body)
            sent[k] += 1
            last[0] = max(last[0], time.monotonic())
            if k == 0:
                log(f"mlflow ingest: {sum(sent)} requests done "
                    f"({time.monotonic() - t_start:.0f} s)")

    pids = server.pids()
    c0, m0 = _cpu_seconds(pids), _machine_busy()
    t_start = time.monotonic()
    last[0] = t_start
    _, errors = podium_side.parallel(clients, client)
    seconds = last[0] - t_start
    cpu_s, busy = _cpu_seconds(pids) - c0, _machine_busy() - m0
    for c in conns:
        c.close()
    if errors:
        raise RuntimeError("mlflow log-batch failed: " + "; ".join(errors[:3]))
    committed = int(psql_mlflow.value(
        "SELECT count(*) FROM metrics WHERE run_uuid IN (" +
        ",".join(f"'{r}'" for r in runs) + ")"))
    want = sum(len(json.loads(b)["metrics"]) for k in range(clients)
               for b in bodies[k][:sent[k]])
    if committed != want:
        raise RuntimeError(f"mlflow: {committed} metric rows committed of {want} sent")
    return {"seconds": seconds, "metric_rows": committed, "requests": sum(sent),
            "values_per_s": committed / seconds, "budget_s": budget_s,
            "server_cpu_seconds": cpu_s, "server_cpu_seconds_per_1000_values":
            cpu_s / committed * 1000 if committed else None, "machine_busy_cpu_seconds": busy}


def _mlflow_history(rest, runs, steps, samples, budget_s=180, at_least=10):
    """`samples` histories, or fewer once budget_s has passed and at_least are done (one took
    3-17 s on this machine under load: the whole count could take most of an hour)."""
    ms, per_key = [], []
    rng = random.Random(31)
    t_start = time.monotonic()
    for i in range(samples):
        if i >= at_least and time.monotonic() - t_start > budget_s:
            break
        run = rng.choice(runs)
        t0 = time.perf_counter()
        for key in workload.METRIC_KEYS:
            k0 = time.perf_counter()
            out = rest.require("GET", "/api/2.0/mlflow/metrics/get-history",
                               query={"run_id": run, "metric_key": key})
            per_key.append((time.perf_counter() - k0) * 1000.0)
            if len(out.get("metrics", [])) != steps or out.get("next_page_token"):
                raise RuntimeError(f"mlflow get-history {run} {key}: "
                                   f"{len(out.get('metrics', []))} points, not {steps}")
        ms.append((time.perf_counter() - t0) * 1000.0)
    return {"p50_ms": percentile(ms, 50), "p99_ms": percentile(ms, 99), "max_ms": max(ms),
            "samples": len(ms), "budget_s": budget_s,
            "per_key_request_p50_ms": percentile(per_key, 50),
            "per_key_request_p99_ms": percentile(per_key, 99)}


def _mlflow_search(rest, exp, samples, with_metric):
    ms = []
    rng = random.Random(31)
    for _ in range(samples):
        model = workload.model_of(rng.randrange(workload.SEARCH_MODELS))
        flt = f"params.model = '{model}'"
        if with_metric:
            flt += f" and metrics.loss < {workload.LOSS_BELOW}"
        t0 = time.perf_counter()
        out = rest.require("POST", "/api/2.0/mlflow/runs/search",
                           {"experiment_ids": [exp], "filter": flt,
                            "max_results": workload.SEARCH_PAGE})
        ms.append((time.perf_counter() - t0) * 1000.0)
        if len(out.get("runs", [])) != workload.SEARCH_PAGE:
            raise RuntimeError(f"mlflow search {flt}: {len(out.get('runs', []))} runs")
    return {"p50_ms": percentile(ms, 50), "p99_ms": percentile(ms, 99), "max_ms": max(ms),
            "samples": len(ms), "filter": "params.model = '...'" + (
                f" and metrics.loss < {workload.LOSS_BELOW}" if with_metric else "")}


def _aim(python, mode, timeout, **kw):
    cmd = [python, os.path.join(HERE, "aim_driver.py"), mode]
    for k, v in kw.items():
        cmd += [f"--{k.replace('_', '-')}", str(v)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"aim {mode} exited {p.returncode}: {(p.stderr or p.stdout)[-1500:]}")
    return json.loads(p.stdout)


def _ingest_row(name, podium, peer, peer_label, target, **details):
    ratio = podium["values_per_s"] / peer["values_per_s"]
    log(f"{name}: Podium {podium['values_per_s']:,.0f} metric values/s, {peer_label} "
        f"{peer['values_per_s']:,.0f}: {ratio:.1f}x")
    return scenario(name, podium["values_per_s"], "metric values/s (step x metric)",
                    f"ratio >= {target:g} (Podium / {peer_label})" if target else
                    "none (recorded beside Podium)", ratio >= target if target else True,
                    baseline_value=peer["values_per_s"], ratio=ratio,
                    ratio_orientation=ORIENTATION, podium=podium,
                    **{peer_label.lower(): peer}, **details)


def run(server, psql, tmp, venv_dir, names, clients=32, steps=10_000, samples=50,
        peer_seconds=60):
    """Rows for the chosen `names` of NAMES. The Podium figures each peer row holds come from
    the same invocation; each peer's failure fails only its own rows."""
    from kit.postgres import Psql
    rows, failures = [], {}
    python = venv.ensure(venv_dir)
    api = Client(server.port, server.token)
    podium_ingest = podium_history = None
    if any(n in names for n in NAMES if n != "peer_mlflow_search"):
        m0 = _machine_busy()
        podium_ingest, podium_runs = podium_side.ingest(
            server, psql, clients, steps, lambda: _cpu_seconds([server.proc.pid]))
        podium_ingest["machine_busy_cpu_seconds"] = _machine_busy() - m0
        log(f"podium history: {samples} requests")
        podium_history = podium_side.history(api, podium_runs, steps, samples)
        log(f"podium history: p50 {podium_history['p50_ms']:.1f} ms, "
            f"p99 {podium_history['p99_ms']:.1f} ms")

    mlflow_names = [n for n in names if n.startswith("peer_mlflow")]
    if mlflow_names:
        mlflow = None
        try:
            mlflow = MlflowServer(python, psql, tmp, clients)
            rest = Rest(mlflow.port)
            psql_mlflow = Psql(mlflow.store_uri)
            about = {"mlflow_version": mlflow.version, "mlflow_workers": mlflow.workers,
                     "mlflow_sqlalchemy_pool": f"{mlflow.pool_size} + {mlflow.max_overflow} "
                     "overflow per worker",
                     "mlflow_backend_store": "PostgreSQL, the same cluster as Podium's "
                     "(database mlflow_bench), psycopg2"}
            if "peer_mlflow_ingest" in names:
                peer = _mlflow_ingest(mlflow, psql_mlflow, clients, steps, peer_seconds)
                rows.append(_ingest_row(
                    "peer_mlflow_ingest", podium_ingest, peer, "MLflow", TARGET_INGEST,
                    clients=clients, podium_steps_per_client=steps,
                    metrics_per_step=len(workload.METRIC_KEYS),
                    podium_lines_per_batch=workload.LINES_PER_BATCH,
                    mlflow_metrics_per_log_batch=METRICS_PER_BATCH, **about))
            if "peer_mlflow_history" in names:
                runs = mlflow_seed.history_runs(rest, psql_mlflow, 8, steps)
                log(f"mlflow history: {samples} samples of 5 x get-history")
                rows.append(_latency_row(
                    "peer_mlflow_history", podium_history,
                    _mlflow_history(rest, runs, steps, samples), "MLflow",
                    steps=steps, metrics=len(workload.METRIC_KEYS),
                    podium_request="GET /api/v1/runs/{id}/metrics?fields=<the 5>&max_points="
                    f"{steps}: one request, every step",
                    mlflow_request="GET /api/2.0/mlflow/metrics/get-history per key: 5 requests "
                    "one after the other, every step", **about))
            if "peer_mlflow_search" in names:
                have = podium_side.seed_search_runs(psql, server)
                exp, mlflow_runs = mlflow_seed.search_runs(rest, psql_mlflow)
                log(f"search: {samples} pages on each side")
                pod = podium_side.search(api, samples)
                both = _mlflow_search(rest, exp, samples, with_metric=True)
                param_only = _mlflow_search(rest, exp, samples, with_metric=False)
                rows.append(_latency_row(
                    "peer_mlflow_search", pod, both, "MLflow",
                    mlflow_parameter_only=param_only,
                    ratio_to_mlflow_parameter_only_p99=param_only["p99_ms"] / pod["p99_ms"],
                    ratio_to_mlflow_parameter_only_p50=param_only["p50_ms"] / pod["p50_ms"],
                    mlflow_runs_in_experiment=mlflow_runs, podium_runs_seeded=have,
                    page=workload.SEARCH_PAGE,
                    podium_request=f"GET /api/v1/runs?model=<one of {workload.SEARCH_MODELS}>"
                    f"&limit={workload.SEARCH_PAGE}: the parameter only, GET /runs has no "
                    "metric filter", **about))
        except Exception as e:  # noqa: BLE001 - MLflow's rows fail, Aim's still run
            for n in mlflow_names:
                failures[n] = str(e)[:800]
        finally:
            if mlflow is not None:
                mlflow.stop()

    aim_names = [n for n in names if n.startswith("peer_aim")]
    if aim_names:
        try:
            repo = os.path.join(tmp, "aim-repo")
            os.makedirs(repo, exist_ok=True)
            subprocess.run([os.path.join(os.path.dirname(python), "aim"), "init", "--repo",
                            repo], check=True, capture_output=True, timeout=300)
            log(f"aim: one run of {steps:,} steps for the history, then {clients} processes "
                f"tracking for at most {peer_seconds} s (its own repository)")
            got = _aim(python, "ingest", 3600, repo=repo, clients=clients, steps=steps,
                       seconds=peer_seconds)
            about = {"aim_version": got["aim_version"],
                     "aim_storage": "its own repository (RocksDB files), written in each client "
                     "process; no server in the write path"}
            peer = {k: got[k] for k in ("seconds", "values", "values_per_s", "index_seconds",
                                        "history_run_seconds")}
            if "peer_aim_ingest" in names:
                rows.append(_ingest_row("peer_aim_ingest", podium_ingest, peer, "Aim", None,
                                        clients=clients, **about))
            if "peer_aim_history" in names:
                log(f"aim history: {samples} samples")
                ms = _aim(python, "history", 3600, repo=repo, runs=got["history_run"],
                          steps=steps, samples=samples)["ms"]
                aim_lat = {"p50_ms": percentile(ms, 50), "p99_ms": percentile(ms, 99),
                           "max_ms": max(ms), "samples": len(ms)}
                row = _latency_row("peer_aim_history", podium_history, aim_lat, "Aim",
                                   aim_request="Aim's SDK in one process holding the repository "
                                   "open: Repo.get_run, then the 5 metrics' steps and values; no "
                                   "HTTP", **about)
                row["target"], row["meets"] = "none (recorded beside Podium)", True
                rows.append(row)
        except Exception as e:  # noqa: BLE001
            for n in aim_names:
                failures[n] = str(e)[:800]
    for n, err in failures.items():
        log(f"{n}: failed: {err}")
        rows.append(scenario(n, None, "", "", False, error=err))
    return rows
