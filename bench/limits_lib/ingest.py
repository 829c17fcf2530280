"""ingest_metrics and ingest_logs: rows committed per second through the agent API by 32
concurrent simulated agents, each holding a rank of its own run, against `COPY` of the same rows
into the same table by psql in the same run.

The agents are real to the server: registered with a worker token, given an attempt through the
assignment long-poll, reporting `running`, heartbeating every 5 s while they upload. Request
bodies are encoded before the clock starts, so the figure is the server's, not Python's JSON
encoder's."""

import csv
import os
import subprocess
import threading
import time

from kit.http import Client
from kit.results import scenario

from .common import log

TARGET_RATIO = 0.5  # ingest_logs
TARGET_RATIO_METRICS = 0.8  # ingest_metrics (issue 31 point 3: a step line stored once)
LINES_PER_BATCH = 500


def step_line(step, k):
    # MaxText's step line as metric_logger.py prints it (every figure with three decimals,
    # docs/maxtext-on-cpu.md): one metrics row each, its text stored once, as that row
    # (engine/core/logs/step_line_text.h).
    seconds = 0.69 + 0.01 * ((step + k) % 7)
    tflops = 83.0 + (step % 11)
    tokens = 11819.0 + (step % 13)
    loss = 10.0 / (1.0 + step / 1000.0)
    return (f"completed step: {step}, seconds: {seconds:.3f}, TFLOP/s/device: {tflops:.3f}, "
            f"Tokens/s/device: {tokens:.3f}, total_weights: 262144, loss: {loss:.3f}",
            (seconds, tflops, tokens, 262144.0, loss))


def plain_line(seq, k):
    # A trainer's ordinary output (about 110 bytes): stored, parsed, yields no metric.
    return (f"I1125 11:{seq // 60 % 60:02d}:{seq % 60:02d}.{seq % 997:06d} 1402{k:02d} "
            f"input_pipeline.py:412] host {k}: prefetched batch {seq} of shard {seq % 1024} "
            f"({4096 + seq % 333} records)")


class Agents:
    """N registered agents on a cpu-1 cluster of N slices, each with a running rank 0 of its own
    run (num_slices 1), kept alive by heartbeats until close()."""

    def __init__(self, server, n):
        admin = server.admin
        self.server = server
        self.cluster = "ingest-" + os.urandom(3).hex()
        admin.require("POST", "/api/v1/clusters",
                      {"name": self.cluster, "accelerator": "cpu-1", "num_slices": n},
                      status=(201,))
        wtoken = admin.require("POST", f"/api/v1/clusters/{self.cluster}/worker-tokens",
                               status=(201,))["token"]
        registrar = Client(server.port, wtoken)
        self.agents = []  # (worker_id, client)
        for s in range(n):
            reg = registrar.require("POST", "/api/v1/agent/register",
                                    {"cluster": self.cluster, "slice": s, "host": 0,
                                     "instance": f"bench-{s}"})
            self.agents.append((reg["worker_id"], Client(server.port, reg["credential"])))
        self.stop = threading.Event()
        self.beater = threading.Thread(target=self._beat, daemon=True)
        self.beater.start()
        self.runs = []
        for s in range(n):
            run = admin.require("POST", "/api/v1/runs",
                                {"name": f"ingest-{s}-{os.urandom(3).hex()}",
                                 "cluster": self.cluster, "workload": "command",
                                 "command": ["sleep", "3600"], "num_slices": 1,
                                 "max_restarts": 0}, status=(201,))
            self.runs.append(run["id"])
        # Each agent takes what its poll hands it: one rank 0 of one of the runs.
        self.attempts = []  # (client, run_id, attempt_id, attempt_number)
        deadline = time.monotonic() + 120
        for worker_id, c in self.agents:
            while True:
                if time.monotonic() > deadline:
                    raise RuntimeError("agents not all assigned within 120 s")
                code, out = c.call("GET", f"/api/v1/agent/assignment?worker_id={worker_id}&wait=5")
                if code == 200 and isinstance(out, dict) and "attempt_id" in out:
                    break
            c.require("POST", f"/api/v1/agent/attempts/{out['attempt_id']}/status",
                      {"rank": out["rank"], "state": "running"})
            number = int(admin.require("GET", f"/api/v1/runs/{out['run_id']}/attempts")
                         ["items"][-1]["number"])
            self.attempts.append((c, out["run_id"], out["attempt_id"], number))

    def _beat(self):
        beat = {w: Client(self.server.port, c.token) for w, c in self.agents}
        while not self.stop.wait(5):
            for w, c in beat.items():
                try:
                    c.call("POST", "/api/v1/agent/heartbeat", {"worker_id": w}, timeout=10)
                except OSError:
                    pass

    def close(self):
        self.stop.set()
        for run in self.runs:
            self.server.admin.call("POST", f"/api/v1/runs/{run}/cancel")


def upload(attempts, bodies):
    """Every agent posts its batches one after another, all agents at once. Returns (seconds,
    lines stored by the server)."""
    stored = [0] * len(attempts)
    retried = [0] * len(attempts)
    errors = []
    start = threading.Barrier(len(attempts) + 1)

    def agent(i):
        c, _, attempt_id, _ = attempts[i]
        path = f"/api/v1/agent/attempts/{attempt_id}/logs"
        start.wait()
        try:
            for body in bodies[i]:
                # A 503 (no database connection free within the pool's wait) is sent again
                # after a pause, as podium-worker does; the batch is idempotent.
                for attempt in range(30):
                    code, out = c.call("POST", path, raw=body)
                    if code != 503:
                        break
                    retried[i] += 1
                    time.sleep(0.1 * (attempt + 1))
                if code != 200:
                    raise RuntimeError(f"{path} -> {code}: {str(out)[:300]}")
                stored[i] += out["stored"]
        except Exception as e:  # reported after the clock stops
            errors.append(f"agent {i}: {e}")

    threads = [threading.Thread(target=agent, args=(i,)) for i in range(len(attempts))]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.monotonic()
    for t in threads:
        t.join(timeout=1800)
    seconds = time.monotonic() - t0
    if errors:
        raise RuntimeError("uploads failed: " + "; ".join(errors[:3]))
    return seconds, sum(stored), sum(retried)


def copy_seconds(psql_url, table, columns, csv_path):
    t0 = time.monotonic()
    subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", psql_url, "-c",
                    f"\\copy {table} ({', '.join(columns)}) FROM '{csv_path}' WITH (FORMAT csv)"],
                   check=True, timeout=1800)
    return time.monotonic() - t0


def run(server, psql, tmp, agents_n, batches, which):
    """`which`: the subset of ("ingest_metrics", "ingest_logs") to measure."""
    import json
    agents = Agents(server, agents_n)
    results = []
    try:
        # Metrics first on seq 0.., then plain lines after them on the same ranks.
        for name in ("ingest_metrics", "ingest_logs"):
            if name not in which:
                continue
            base_seq = 0 if name == "ingest_metrics" else batches * LINES_PER_BATCH
            bodies = []
            csv_path = os.path.join(tmp, f"{name}.csv")
            # The step lines themselves, which the API also stores: COPY of both tables is what
            # the API's work costs at the machine's limit.
            lines_csv = os.path.join(tmp, f"{name}-lines.csv")
            with open(csv_path, "w", newline="") as f, open(lines_csv, "w", newline="") as lf:
                w = csv.writer(f)
                lw = csv.writer(lf)
                for k, (_, run_id, attempt_id, number) in enumerate(agents.attempts):
                    mine = []
                    for b in range(batches):
                        seq0 = base_seq + b * LINES_PER_BATCH
                        lines = []
                        for j in range(LINES_PER_BATCH):
                            seq = seq0 + j
                            if name == "ingest_metrics":
                                text, v = step_line(seq, k)
                                # The same row under another attempt id: the table's key.
                                w.writerow([run_id, attempt_id + "~copy", number, seq, *v, "{}",
                                            "f"])
                                lw.writerow([run_id, attempt_id + "~copy", number, 0, seq, text])
                            else:
                                text = plain_line(seq, k)
                                w.writerow([run_id, attempt_id + "~copy", number, 0, seq, text])
                            lines.append(text)
                        mine.append(json.dumps({"rank": 0, "seq": seq0, "lines": lines}).encode())
                    bodies.append(mine)
            rows = agents_n * batches * LINES_PER_BATCH
            if name == "ingest_metrics":
                table, cols = "metrics", ["run_id", "attempt_id", "attempt_number", "step",
                                          "step_seconds", "tflops_per_device",
                                          "tokens_per_second_per_device", "total_weights",
                                          "loss", "extra", "rampup"]
            else:
                table, cols = "log_lines", ["run_id", "attempt_id", "attempt_number", "rank",
                                            "seq", "line"]
            log(f"{name}: COPY of {rows} rows into {table} (baseline)")
            base_s = copy_seconds(psql.url, table, cols, csv_path)
            both_s = None
            if name == "ingest_metrics":
                both_s = base_s + copy_seconds(psql.url, "log_lines", [
                    "run_id", "attempt_id", "attempt_number", "rank", "seq", "line"], lines_csv)
            os.unlink(lines_csv)
            log(f"{name}: {agents_n} agents x {batches} batches of {LINES_PER_BATCH} lines")
            api_s, stored, retried = upload(agents.attempts, bodies)
            ids = ",".join(f"'{a[2]}'" for a in agents.attempts)
            if name == "ingest_metrics":
                committed = int(psql.value(
                    f"SELECT count(*) FROM metrics WHERE attempt_id IN ({ids})"))
            else:
                committed = stored
            if committed != rows:
                raise RuntimeError(f"{name}: {committed} rows committed of {rows} sent")
            value = committed / api_s
            baseline = rows / base_s
            ratio = value / baseline
            log(f"{name}: {value:,.0f} rows/s via the API, {baseline:,.0f} rows/s by COPY, "
                f"ratio {ratio:.2f}")
            target = TARGET_RATIO_METRICS if name == "ingest_metrics" else TARGET_RATIO
            results.append(scenario(
                name, value, "rows/s", f"ratio >= {target}", ratio >= target,
                baseline_value=baseline, ratio=ratio, rows=rows, agents=agents_n,
                lines_per_batch=LINES_PER_BATCH, api_seconds=api_s, copy_seconds=base_s,
                batches_retried_after_503=retried,
                copy_of_rows_and_their_lines_rows_per_s=rows / both_s if both_s else None,
                ratio_to_copy_of_rows_and_their_lines=value / (rows / both_s) if both_s else None))
            os.unlink(csv_path)
    finally:
        agents.close()
    return results
