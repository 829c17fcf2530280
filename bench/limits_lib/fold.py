"""dispatch_latency, agent_scale and the dashboard bench (web_render): their own scripts, run
here; their full results go to bench/results/<name>.json as before, and rows of each to
latest.json."""

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


WEB_SCENARIOS = ["web_runs_page", "web_run_page", "web_compare_page"]


def web_render(bin_dir, database_url, reuse=False):
    """The dashboard at team scale (issue 31.5): bench/web/render.mjs in Chromium against
    podium-server from bin_dir, its own database on the bench PostgreSQL (dropped after); its full
    result goes to bench/results/web_render.json, a row per page to latest.json."""
    output = os.path.join(ROOT, "bench", "results", "web_render.json")
    if reuse:
        log(f"web_render: reusing {output}")
    else:
        web = os.path.join(ROOT, "web")
        log("web_render: building the dashboard, then bench/web/render.mjs")
        subprocess.run(["npm", "run", "--silent", "build"], cwd=web, check=True,
                       stdout=subprocess.DEVNULL)
        env = {**os.environ, "PODIUM_BIN_DIR": bin_dir, "PODIUM_TEST_DATABASE_URL": database_url,
               "PODIUM_BENCH_SERVER_BUILD": os.path.relpath(bin_dir, ROOT), "BENCH_OUTPUT": output}
        p = subprocess.run(["node", os.path.join(ROOT, "bench", "web", "render.mjs")], env=env,
                           timeout=3600, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        log(p.stdout[-3000:])
        if p.returncode != 0:
            raise RuntimeError(f"bench/web/render.mjs failed (exit {p.returncode}): "
                               f"{p.stdout[-2000:]}")
    with open(output) as f:
        out = json.load(f)
    return [scenario(s["name"], s["value"], s["unit"], f"p50 < {s['target']} ms", s["meets"],
                     what=s["what"], first_load_ms=s["first_load"]["usable_ms"],
                     loads=len(s["samples"]), loadavg_before=out.get("loadavg_before"),
                     loadavg_after=out.get("loadavg_after"), result_date=out["date"],
                     result_binaries=out.get("server_build"))
            for s in out["scenarios"]]
