"""The workload both sides of a peer scenario get: the same steps and metric values, each
product in its own client's form (MaxText step lines for Podium's agents, log-batch bodies of
MLflow's client, Aim's track calls), and the 10,000 runs of the search scenario."""

import json

from limits_lib.ingest import LINES_PER_BATCH, step_line

# The five values of a MaxText step line, named as Podium's metrics columns; the peers log them
# under the same keys.
METRIC_KEYS = ("step_seconds", "tflops_per_device", "tokens_per_second_per_device",
               "total_weights", "loss")
SEARCH_RUNS = 10_000
SEARCH_MODELS = 20  # a parameter with 20 values: each matches 500 of the 10,000 runs
SEARCH_PAGE = 100   # one page of results, the same on both sides
LOSS_BELOW = 2.5    # the metric filter: half of each model's runs pass it


def model_of(i):
    return f"model-{i % SEARCH_MODELS:02d}"


def final_loss_of(i):
    return 1.5 + (i % 100) / 50.0  # 1.5 .. 3.48


def podium_bodies(steps, k):
    """Agent k's batches of LINES_PER_BATCH step lines, JSON-encoded."""
    bodies = []
    for seq0 in range(0, steps, LINES_PER_BATCH):
        lines = [step_line(s, k)[0] for s in range(seq0, min(steps, seq0 + LINES_PER_BATCH))]
        bodies.append(json.dumps({"rank": 0, "seq": seq0, "lines": lines}).encode())
    return bodies


def mlflow_bodies(run_id, steps, k, t0_ms, per_batch):
    """Client k's log-batch bodies: steps x 5 metrics, per_batch metrics per request (MLflow's
    client splits a batch the same way), the values of the same step lines."""
    metrics = []
    for s in range(steps):
        values = step_line(s, k)[1]
        for key, v in zip(METRIC_KEYS, values):
            metrics.append({"key": key, "value": v, "timestamp": t0_ms + s, "step": s})
    return [json.dumps({"run_id": run_id, "metrics": metrics[i:i + per_batch]}).encode()
            for i in range(0, len(metrics), per_batch)]
