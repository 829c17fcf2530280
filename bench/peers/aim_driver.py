"""Aim's side of the peer scenarios, run by the peers venv's python (Aim is imported here, never
in bench/limits.py). Aim stores runs in its own repository (RocksDB files under --repo), written
in-process by the training script's `aim.Run`; there is no server in the write path.

  ingest  --repo DIR --clients N --steps S --seconds T   first one run of S steps (the history
          scenario's, untimed), then N processes, each one Run tracking the five metrics of a
          MaxText step line step after step, for S steps or T seconds; prints the rate as JSON.
  history --repo DIR --runs H,H --steps S --samples N   the five series of a random run, read
          through Aim's SDK in one process holding the repository open (what Aim's own web
          server does per request, without its HTTP and encoding); prints latencies as JSON.
Aim 3.29 answers reads from its index, which `ingest` builds for its runs before it returns."""

import argparse
import importlib.metadata
import json
import multiprocessing
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from limits_lib.ingest import step_line  # noqa: E402

from peers.workload import METRIC_KEYS  # noqa: E402


def _client(repo, k, steps, seconds, ready, go, out):
    import aim  # already imported by the parent before the fork
    run = aim.Run(repo=repo, experiment="peer-ingest", system_tracking_interval=None,
                  log_system_params=False, capture_terminal_logs=False)
    values = [dict(zip(METRIC_KEYS, step_line(s, k)[1])) for s in range(steps)]
    ready.wait()
    go.wait()
    t0 = time.monotonic()
    for s, v in enumerate(values):
        if time.monotonic() - t0 >= seconds:
            break
        run.track(v, step=s)
    run.close()  # flushes: the values are in the repository once this returns
    out.put((run.hash, time.monotonic()))


def _history_run(repo, steps, out):
    import aim
    run = aim.Run(repo=repo, experiment="peer-history", system_tracking_interval=None,
                  log_system_params=False, capture_terminal_logs=False)
    for s in range(steps):
        run.track(dict(zip(METRIC_KEYS, step_line(s, 0)[1])), step=s)
    run.close()
    out.put(run.hash)


def ingest(args):
    import aim  # imported once, before the clients are forked
    from aim.sdk.index_manager import RepoIndexManager
    from aim.storage.context import Context

    # The history scenario's run: every step, written alone before the clients (untimed), in a
    # child as well: a repository opened in this process would hand its locks to the forks.
    ctx = multiprocessing.get_context("fork")
    hq = ctx.Queue()
    t0 = time.monotonic()
    writer = ctx.Process(target=_history_run, args=(args.repo, args.steps, hq))
    writer.start()
    history_run = hq.get(timeout=3600)
    writer.join()
    history_run_seconds = time.monotonic() - t0
    print(f"aim: history run written in {history_run_seconds:.0f} s", file=sys.stderr)

    ready = ctx.Barrier(args.clients + 1)
    go = ctx.Barrier(args.clients + 1)
    out = ctx.Queue()
    procs = [ctx.Process(target=_client, args=(args.repo, k, args.steps, args.seconds, ready, go,
                                               out)) for k in range(args.clients)]
    for p in procs:
        p.start()
    ready.wait(timeout=900)
    go.wait(timeout=60)
    t0 = time.monotonic()
    ends = [out.get(timeout=3600) for _ in procs]
    seconds = max(t for _, t in ends) - t0
    hashes = [h for h, _ in ends]
    for p in procs:
        p.join(timeout=120)
    if any(p.exitcode != 0 for p in procs):
        sys.exit(f"aim ingest: a client exited with {[p.exitcode for p in procs]}")
    # Aim answers reads from its index (meta/index), which its web server (`aim up`) fills in
    # the background as runs change; without one running, the runs are indexed here (timed
    # apart: the clients' work ended when close() returned).
    repo = aim.Repo(args.repo)
    t1 = time.monotonic()
    indexer = RepoIndexManager.get_index_manager(repo)
    for h in hashes + [history_run]:
        indexer.index(h)
    index_seconds = time.monotonic() - t1
    # What was committed, read back from the repository.
    repo = aim.Repo(args.repo)
    values = 0
    for h in hashes:
        r = repo.get_run(h)
        for key in METRIC_KEYS:
            values += len(r.get_metric(key, Context({})).values.values_list())
    json.dump({"seconds": seconds, "values": values, "values_per_s": values / seconds,
               "runs": hashes, "history_run": history_run,
               "history_run_seconds": history_run_seconds, "index_seconds": index_seconds,
               "aim_version": importlib.metadata.version("aim")}, sys.stdout)


def history(args):
    import aim
    from aim.storage.context import Context
    repo = aim.Repo(args.repo)
    runs = args.runs.split(",")
    rng = random.Random(31)
    ms = []
    for _ in range(args.samples):
        h = rng.choice(runs)
        t0 = time.perf_counter()
        run = repo.get_run(h)
        got = []
        for key in METRIC_KEYS:
            seq = run.get_metric(key, Context({}))
            steps, vals = seq.values.sparse_list()
            got.append((steps, vals))
        ms.append((time.perf_counter() - t0) * 1000.0)
        if any(len(v) != args.steps for _, v in got):
            sys.exit(f"aim history of {h}: {[len(v) for _, v in got]} values, not {args.steps}")
    json.dump({"ms": ms}, sys.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["ingest", "history"])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--runs", default="")
    ap.add_argument("--samples", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=60, help="ingest clients stop tracking then")
    args = ap.parse_args()
    (ingest if args.mode == "ingest" else history)(args)


if __name__ == "__main__":
    main()
