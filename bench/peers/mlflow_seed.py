"""The MLflow data the two query scenarios read, written by SQL into MLflow's own schema (as
bench/limits_lib/scale.py writes Podium's): one run made through the REST API is the template,
copied into the runs of the search and given the rows of a full history. Through MLflow's REST
API the same rows took hours on this machine (about 400 metric values/s, see
docs/benchmarks.md); what is measured is reading them. Kept between invocations."""

from limits_lib.common import log

from . import workload

KEY_VALUES = {  # the values of the MaxText step line of step s (limits_lib.ingest.step_line)
    "step_seconds": "0.69 + 0.01 * ((s + r) % 7)",
    "tflops_per_device": "83.0 + (s % 11)",
    "tokens_per_second_per_device": "11819.0 + (s % 13)",
    "total_weights": "262144.0",
    "loss": "10.0 / (1.0 + s / 1000.0)",
}


def history_runs(rest, psql_mlflow, n, steps):
    """n runs of `steps` steps x the 5 metrics in experiment peer-history; returns their ids."""
    exp = rest.experiment("peer-history")
    want = steps * len(workload.METRIC_KEYS)
    have = psql_mlflow.run(
        f"SELECT r.run_uuid FROM runs r WHERE r.experiment_id = {int(exp)} AND (SELECT count(*) "
        f"FROM metrics m WHERE m.run_uuid = r.run_uuid) = {want} ORDER BY r.run_uuid").split()
    while len(have) < n:
        run = rest.create_run(exp, f"history-{len(have)}")
        log(f"mlflow history: writing {steps:,} steps x {len(workload.METRIC_KEYS)} metrics "
            f"into run {run} (SQL)")
        cases = " ".join(f"WHEN '{k}' THEN {v}" for k, v in KEY_VALUES.items())
        keys = ",".join(f"'{k}'" for k in workload.METRIC_KEYS)
        psql_mlflow.run(f"""
          INSERT INTO metrics (key, value, timestamp, run_uuid, step, is_nan)
          SELECT k, CASE k {cases} END, 1700000000000 + s, '{run}', s, false
            FROM generate_series(0, {steps - 1}) s, unnest(ARRAY[{keys}]) k,
                 (SELECT {len(have)} AS r) x;
          INSERT INTO latest_metrics (key, value, timestamp, step, is_nan, run_uuid)
          SELECT key, value, timestamp, step, is_nan, run_uuid FROM metrics
           WHERE run_uuid = '{run}' AND step = {steps - 1};
          ANALYZE metrics;""")
        have.append(run)
    return have[:n]


def search_runs(rest, psql_mlflow):
    """SEARCH_RUNS runs in experiment peer-search, each with 3 parameters and 2 final metrics,
    the `model` parameter cycling as on Podium's side. Returns (experiment id, runs)."""
    exp = rest.experiment("peer-search")
    count = int(psql_mlflow.value(
        f"SELECT count(*) FROM runs WHERE experiment_id = {int(exp)} AND name LIKE 'peer-%'"))
    if count >= workload.SEARCH_RUNS:
        return exp, count
    template = rest.create_run(exp, "template")
    rest.require("POST", "/api/2.0/mlflow/runs/log-batch", {
        "run_id": template,
        "params": [{"key": "model", "value": "template"},
                   {"key": "learning_rate", "value": "0.0001"},
                   {"key": "per_device_batch_size", "value": "1"}],
        "metrics": [{"key": "loss", "value": 9.0, "timestamp": 1700000000000, "step": 10_000},
                    {"key": "step_seconds", "value": 0.7, "timestamp": 1700000000000,
                     "step": 10_000}]})
    log(f"mlflow search: copying run {template} into {workload.SEARCH_RUNS:,} runs (SQL)")
    uuid = "md5('peer-search-' || g)"
    runs = f"generate_series(0, {workload.SEARCH_RUNS - 1}) g"
    psql_mlflow.run(f"""
      INSERT INTO runs SELECT (jsonb_populate_record(r, jsonb_build_object(
          'run_uuid', {uuid}, 'name', 'peer-' || lpad(g::text, 5, '0'),
          'start_time', r.start_time - g * 60000,
          'artifact_uri', replace(r.artifact_uri, r.run_uuid, {uuid})))).*
        FROM runs r, {runs} WHERE r.run_uuid = '{template}';
      INSERT INTO tags (key, value, run_uuid)
      SELECT t.key, CASE t.key WHEN 'mlflow.runName' THEN 'peer-' || lpad(g::text, 5, '0')
                     ELSE t.value END, {uuid}
        FROM tags t, {runs} WHERE t.run_uuid = '{template}';
      INSERT INTO params (key, value, run_uuid)
      SELECT 'model', 'model-' || lpad((g % {workload.SEARCH_MODELS})::text, 2, '0'), {uuid}
        FROM {runs}
      UNION ALL SELECT 'learning_rate', (0.0001 * (1 + g % 7))::text, {uuid} FROM {runs}
      UNION ALL SELECT 'per_device_batch_size', (2 ^ (g % 4))::int::text, {uuid} FROM {runs};
      INSERT INTO metrics (key, value, timestamp, run_uuid, step, is_nan)
      SELECT 'loss', 1.5 + (g % 100) / 50.0, 1700000000000, {uuid}, 10000, false FROM {runs}
      UNION ALL SELECT 'step_seconds', 0.69 + (g % 10) / 100.0, 1700000000000, {uuid}, 10000,
                       false FROM {runs};
      INSERT INTO latest_metrics (key, value, timestamp, step, is_nan, run_uuid)
      SELECT key, value, timestamp, step, is_nan, run_uuid FROM metrics
       WHERE run_uuid IN (SELECT {uuid} FROM {runs});
      ANALYZE runs; ANALYZE params; ANALYZE latest_metrics; ANALYZE tags; ANALYZE metrics;""")
    return exp, int(psql_mlflow.value(
        f"SELECT count(*) FROM runs WHERE experiment_id = {int(exp)} AND name LIKE 'peer-%'"))
