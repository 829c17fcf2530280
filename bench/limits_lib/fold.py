"""dispatch_latency and agent_scale: their own scripts (each starts its server with an embedded
PostgreSQL), run here; their full results go to bench/results/<name>.json as before, and a row
of each to latest.json."""

import json
import os
import subprocess
import sys

from kit import ROOT
from kit.results import scenario

from .common import log


def _script(name, args, output, timeout, reuse=False):
    if reuse:
        # The script's last result as it stands (its own date and binaries say when and what).
        log(f"{name}: reusing {output}")
        with open(output) as f:
            return json.load(f)
    cmd = [sys.executable, os.path.join(ROOT, "bench", f"{name}.py"), "--output", output] + args
    log(f"{name}: {' '.join(cmd[1:])}")
    p = subprocess.run(cmd, timeout=timeout, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode not in (0, 1) or not os.path.exists(output):
        raise RuntimeError(f"{name} wrote no result (exit {p.returncode}): {p.stdout[-2000:]}")
    with open(output) as f:
        return json.load(f)


def dispatch_latency(bin_dir, runs, reuse=False):
    out = _script("dispatch_latency", ["--bin-dir", bin_dir, "-n", str(runs)],
                  os.path.join(ROOT, "bench", "results", "dispatch_latency.json"), timeout=900,
                  reuse=reuse)
    lat = out["latency_ms"]
    return [scenario("dispatch_latency", lat["p50"], "ms (p50)", f"p50 < {out['target_p50_ms']:.0f}"
                     " ms", out["meets_target"], p99_ms=lat.get("p99"), p90_ms=lat["p90"],
                     max_ms=lat["max"], runs=out["runs"],
                     submit_round_trip_ms_p50=out["submit_round_trip_ms_p50"],
                     result_date=out["date"])]


def agent_scale(bin_dir, agents, reuse=False):
    """The one-gang measure of bench/agent_scale.py (--single-gang: heartbeats with 1,000 polls
    parked against the same heartbeats with none, then one gang's wake-up); its sustained
    10-minute scenario (issue 13) is run on its own. A reused result may be of either form."""
    out = _script("agent_scale", ["--bin-dir", bin_dir, "--agents", str(agents), "--single-gang"],
                  os.path.join(ROOT, "bench", "results", "agent_scale_single_gang.json"),
                  timeout=900, reuse=reuse)
    agents = out["agents"]
    hb = out["heartbeat_ms"]
    common = {"agents": agents, "heartbeats_failed": out.get("heartbeats_failed"),
              "result_date": out["date"], "result_binaries": out.get("binaries"),
              "result_mode": out.get("mode", "single_gang")}
    target = f"p99 < {out['targets'].get('heartbeat_p99_ms', out['targets'].get('heartbeat_p99_ms_with_polls_parked'))} ms"
    if "with_polls_parked" in hb:
        return [scenario("agent_scale", hb["with_polls_parked"]["p99"],
                         f"ms (heartbeat p99, {agents} polls parked)", target + "; every agent woken",
                         out["meets_targets"], baseline_value=hb["baseline_no_polls"]["p99"],
                         ratio=hb["ratio_p99"], agents_woken=out.get("agents_woken_with_their_rank"),
                         server_threads=out["server_with_polls_parked"]["threads"],
                         server_rss_mb=out["server_with_polls_parked"]["rss_mb"],
                         gang_wake_ms_p99=out["gang_wake_ms"]["p99"], **common)]
    return [scenario("agent_scale", hb["p99"], f"ms (heartbeat p99, {agents} agents, gangs running)",
                     target, out["meets_targets"], hosts_lost=out.get("hosts_lost"),
                     gangs_fully_assigned=out.get("gangs_fully_assigned"), **common)]
