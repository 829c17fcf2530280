"""dispatch_latency and agent_scale: their own scripts (each starts its server with an embedded
PostgreSQL), run here; their full results go to bench/results/<name>.json as before, and a row
of each to latest.json."""

import json
import os
import subprocess
import sys

from .common import ROOT, log, scenario


def _script(name, args, output, timeout):
    cmd = [sys.executable, os.path.join(ROOT, "bench", f"{name}.py"), "--output", output] + args
    log(f"{name}: {' '.join(cmd[1:])}")
    p = subprocess.run(cmd, timeout=timeout, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode not in (0, 1) or not os.path.exists(output):
        raise RuntimeError(f"{name} wrote no result (exit {p.returncode}): {p.stdout[-2000:]}")
    with open(output) as f:
        return json.load(f)


def dispatch_latency(bin_dir, runs):
    out = _script("dispatch_latency", ["--bin-dir", bin_dir, "-n", str(runs)],
                  os.path.join(ROOT, "bench", "results", "dispatch_latency.json"), timeout=900)
    lat = out["latency_ms"]
    return [scenario("dispatch_latency", lat["p50"], "ms (p50)", f"p50 < {out['target_p50_ms']:.0f}"
                     " ms", out["meets_target"], p99_ms=lat.get("p99"), p90_ms=lat["p90"],
                     max_ms=lat["max"], runs=out["runs"],
                     submit_round_trip_ms_p50=out["submit_round_trip_ms_p50"])]


def agent_scale(bin_dir, agents):
    out = _script("agent_scale", ["--bin-dir", bin_dir, "--agents", str(agents)],
                  os.path.join(ROOT, "bench", "results", "agent_scale.json"), timeout=900)
    hb = out["heartbeat_ms"]
    return [scenario("agent_scale", hb["with_polls_parked"]["p99"],
                     f"ms (heartbeat p99, {agents} polls parked)",
                     f"p99 < {out['targets']['heartbeat_p99_ms_with_polls_parked']:.0f} ms; "
                     "every agent woken", out["meets_targets"],
                     baseline_value=hb["baseline_no_polls"]["p99"], ratio=hb["ratio_p99"],
                     agents=agents, heartbeats_failed=out["heartbeats_failed"],
                     agents_woken=out["agents_woken_with_their_rank"],
                     server_threads=out["server_with_polls_parked"]["threads"],
                     server_rss_mb=out["server_with_polls_parked"]["rss_mb"],
                     gang_wake_ms_p99=out["gang_wake_ms"]["p99"])]
