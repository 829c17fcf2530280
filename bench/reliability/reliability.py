#!/usr/bin/env python3
"""Runs the reliability scenarios and writes bench/results/reliability.json.

    bench/reliability/run.sh            full: 50-kill soak, 5 outages, hostile clients
    bench/reliability/run.sh --ci       CI: 5-kill soak, 1 outage (a few minutes)

See docs/reliability.md. Exit status 0 only when every scenario that ran met every target.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common as c  # noqa: E402
from common import say  # noqa: E402
from kit.results import commit  # noqa: E402

RESULTS = os.path.join(c.ROOT, "bench", "results", "reliability.json")

# Targets from issue 12; a scenario that misses one fails the command.
P99_DOWN_MS = 100
RECOVERY_S = 5
HEALTHZ_P99_MS = 50


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--ci", action="store_true",
                   help="CI size: 5 server kills, 1 outage of 5 s, no hostile scenario, no fuzz")
    p.add_argument("--scenarios", default=None,
                   help="comma-separated subset of soak,outage,hostile,fuzz")
    p.add_argument("--kills", type=int, default=None, help="server kills in the soak (50)")
    p.add_argument("--outages", type=int, default=None, help="database outages (5)")
    p.add_argument("--outage-min-seconds", type=float, default=5)
    p.add_argument("--outage-max-seconds", type=float, default=30)
    p.add_argument("--idle-connections", type=int, default=5000)
    p.add_argument("--hostile-small", type=int, default=50,
                   help="connections of each other hostile kind")
    p.add_argument("--hostile-seconds", type=int, default=40)
    p.add_argument("--steps", type=int, default=None, help="steps of each reference run")
    p.add_argument("--fuzz-seconds", type=int, default=None,
                   help="seconds per fuzz target (full: 0 = keep the recorded fuzz figures)")
    p.add_argument("--fuzz-runs", type=int, default=None,
                   help="executions per fuzz target (issue 12: 10000000); --fuzz-seconds then "
                        "bounds each target's time (default 7200)")
    p.add_argument("--fuzz-targets", default=None,
                   help="comma-separated fuzz targets (default: every fuzz/*_fuzzer.cpp); the "
                        "others keep their recorded figures")
    p.add_argument("--fuzz-jobs", type=int, default=1,
                   help="fuzz targets run at once, one process each (a core each: on a machine "
                        "with N free cores, N)")
    p.add_argument("--fuzz-chunk", type=int, default=500000,
                   help="with --fuzz-runs: executions per fuzzer process; a long run is fresh "
                        "processes from one corpus, since one slows as it ages (0: one process)")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--work", default=None, help="scratch directory (default /tmp/podium-rel-*)")
    p.add_argument("--keep", action="store_true", help="keep the scratch directory")
    p.add_argument("--output", default=None,
                   help="results file (default bench/results/reliability.json; --ci: none)")
    a = p.parse_args()
    if a.ci:
        a.kills = 5 if a.kills is None else a.kills
        a.outages = 1 if a.outages is None else a.outages
        a.outage_max_seconds = min(a.outage_max_seconds, 5)
        # 40 steps last about 45 s: the five kills (about 20 s after the runs start) and the 5 s
        # outage fall inside them, and the suite does not wait for 20 more steps per scenario.
        a.steps = 40 if a.steps is None else a.steps
        a.scenarios = a.scenarios or "soak,outage"
        a.fuzz_seconds = 0 if a.fuzz_seconds is None else a.fuzz_seconds
    a.kills = 50 if a.kills is None else a.kills
    a.outages = 5 if a.outages is None else a.outages
    a.steps = 100 if a.steps is None else a.steps
    a.scenarios = (a.scenarios or "soak,outage,hostile,fuzz").split(",")
    a.fuzz_seconds = 0 if a.fuzz_seconds is None else a.fuzz_seconds
    if a.fuzz_runs and not a.fuzz_seconds:
        a.fuzz_seconds = 7200
    a.seed = int(time.time()) if a.seed is None else a.seed
    # Every loop is bounded in time as well as in count.
    a.soak_minutes = 10 + a.kills * 0.5
    a.outage_minutes = 5 + a.outages * 1.5
    a.hostile_minutes = 10
    a.drain_seconds = 600 if not a.ci else 300
    if a.output is None and not a.ci:
        a.output = RESULTS
    return a


FUZZ_EXECUTIONS = 10_000_000  # issue 12: each target's long run


def fuzz_process(t, seconds, runs, env):
    """One fuzzer process of at most `runs` executions and `seconds`: (executions, seconds) or
    (None, the failure's text)."""
    env = dict(env)
    if runs:
        env["PODIUM_FUZZ_RUNS"] = str(runs)
    r = subprocess.run([os.path.join(c.ROOT, "scripts", "fuzz.sh"), t, str(seconds)],
                       capture_output=True, text=True, timeout=seconds + 3600, env=env)
    m = re.search(r"fuzz: %s ok: (\d+) executions in (\d+) s" % re.escape(t), r.stdout)
    if r.returncode == 0 and m:
        return int(m.group(1)), int(m.group(2))
    return None, (r.stdout + r.stderr)[-500:]


def fuzz_one(t, seconds, runs, env, chunk):
    """A target's long run: `runs` executions (or `seconds`) in fresh processes of at most `chunk`
    executions each, from the same corpus. A libFuzzer process slows as it ages (config_yaml from
    about 1,600 to about 300 executions/s within half an hour; docs/reliability.md), so a long run
    is many short ones; a crash stops it."""
    say("fuzz: %s for %s" % (t, "%d executions (at most %d s)" % (runs, seconds) if runs
                             else "%d s" % seconds))
    executions, spent, processes = 0, 0, 0
    while True:
        left_s = seconds - spent
        want = min(chunk, runs - executions) if runs and chunk else (runs - executions if runs
                                                                      else None)
        if left_s <= 0 or (runs and want <= 0):
            break
        n, took = fuzz_process(t, left_s, want, env)
        processes += 1
        if n is None:
            return ({"executions": executions, "seconds": spent, "processes": processes,
                     "crashes": 1}, "fuzz %s failed: %s" % (t, took))
        executions += n
        spent += max(1, took)
        if not runs or not chunk:
            break  # one process for the whole time (or all the executions)
    record = {"executions": executions, "seconds": spent, "processes": processes, "crashes": 0}
    say("fuzz: %s: %d executions in %d s (%d processes), 0 crashes" % (t, executions, spent,
                                                                        processes))
    problem = None
    if executions < FUZZ_EXECUTIONS:
        problem = "fuzz %s: %d executions (target >= %d)" % (t, executions, FUZZ_EXECUTIONS)
    return record, problem


def run_fuzz(seconds, runs=None, targets=None, jobs=1, chunk=None):
    every = sorted(f[:-4] for f in os.listdir(os.path.join(c.ROOT, "fuzz"))
                   if f.endswith("_fuzzer.cpp"))
    targets = targets or every
    unknown = [t for t in targets if t not in every]
    if unknown:
        return {}, ["unknown fuzz target(s): %s (known: %s)" % (", ".join(unknown),
                                                                ", ".join(every))]
    # Build once: the runs below share the build directory and must not build it concurrently.
    b = subprocess.run([os.path.join(c.ROOT, "scripts", "fuzz.sh"), "--build-only"],
                       capture_output=True, text=True)
    if b.returncode != 0:
        return {}, ["fuzz build failed: %s" % (b.stdout + b.stderr)[-500:]]
    env = dict(os.environ, PODIUM_FUZZ_SKIP_BUILD="1")
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        done = dict(zip(targets, pool.map(lambda t: fuzz_one(t, seconds, runs, env, chunk),
                                          targets)))
    out = {t: done[t][0] for t in targets}
    return out, [done[t][1] for t in targets if done[t][1]]


def main():
    a = parse_args()
    c.install_exit_handlers()
    for b in ("podium-server", "podium-worker"):
        if not os.access(os.path.join(c.BIN, b), os.X_OK):
            say("%s/%s not found: build it (scripts/build.sh build/rel) or set PODIUM_BIN_DIR" %
                (c.BIN, b))
            return 2
    work = a.work or "/tmp/podium-rel-%d" % os.getpid()
    os.makedirs(work, exist_ok=True)
    # PostgreSQL clusters need short paths that the postgres account can reach.
    a.pg_root = os.path.join(work, "pg")
    os.makedirs(a.pg_root, exist_ok=True)
    os.chmod(work, 0o755)
    os.chmod(a.pg_root, 0o777)
    say("reliability: %s, seed %d, scratch %s, binaries %s" %
        ("CI" if a.ci else "full", a.seed, work, c.BIN))
    previous = {}
    if a.output and os.path.exists(a.output):
        with open(a.output) as f:
            previous = json.load(f)
    result = {"commit": commit(short=False)}
    details = {"seed": a.seed, "mode": "ci" if a.ci else "full", "started": time.time()}
    problems = []
    scenarios = {"soak": ("crash_soak", "soak"), "outage": ("outage", "outage"),
                 "hostile": ("hostile", "hostile")}
    t_all = time.monotonic()
    for name in ("soak", "outage", "hostile"):
        if name not in a.scenarios:
            continue
        key, module = scenarios[name]
        t0 = time.monotonic()
        say("==== %s ====" % name)
        try:
            mod = __import__(module)
            summary, det, probs = mod.run(a, os.path.join(work, name))
        except Exception as e:  # noqa: BLE001 - a scenario that breaks is a failed scenario
            traceback.print_exc()
            summary, det, probs = None, {"error": str(e)}, ["%s broke: %s" % (name, e)]
        c.stop_everything()
        det["seconds"] = round(time.monotonic() - t0, 1)
        if summary is not None:
            result[key] = summary
        details[key] = det
        problems += ["%s: %s" % (name, p) for p in probs]
        say("%s: %s (%.0f s)" % (name, json.dumps(summary), det["seconds"]))
        for p in probs[:20]:
            say("  problem:", p)
    # Targets.
    s = result.get("crash_soak")
    if s and (s["lost"] or s["duplicated"] or s["kills"] < a.kills):
        problems.append("crash soak: %d lost, %d duplicated, %d of %d kills" %
                        (s["lost"], s["duplicated"], s["kills"], a.kills))
    o = result.get("outage")
    if o:
        if o["p99_ms_while_down"] is None or o["p99_ms_while_down"] >= P99_DOWN_MS:
            problems.append("outage: 503 p99 %s ms while down (target < %d)" %
                            (o["p99_ms_while_down"], P99_DOWN_MS))
        if o["recovery_seconds"] is None or o["recovery_seconds"] > RECOVERY_S:
            problems.append("outage: recovery %s s (target <= %d)" % (o["recovery_seconds"],
                                                                     RECOVERY_S))
        if o["lost"]:
            problems.append("outage: %d lost" % o["lost"])
    hz = result.get("hostile")
    if hz and (hz["healthz_p99_ms"] is None or hz["healthz_p99_ms"] >= HEALTHZ_P99_MS):
        problems.append("hostile: /healthz p99 %s ms (target < %d)" % (hz["healthz_p99_ms"],
                                                                       HEALTHZ_P99_MS))
    if "fuzz" in a.scenarios and a.fuzz_seconds > 0:
        targets = a.fuzz_targets.split(",") if a.fuzz_targets else None
        fresh, fp = run_fuzz(a.fuzz_seconds, a.fuzz_runs, targets, a.fuzz_jobs, a.fuzz_chunk)
        # Targets not run this time keep their recorded long runs.
        result["fuzz"] = dict(previous.get("fuzz") or {}, **fresh)
        problems += fp
    elif previous.get("fuzz"):
        result["fuzz"] = previous["fuzz"]  # the recorded long runs (not rerun this time)
    # Scenarios not run this time keep their recorded figures in the results file.
    for key in ("crash_soak", "outage", "hostile"):
        if key not in result and key in previous:
            result[key] = previous[key]
    details["seconds"] = round(time.monotonic() - t_all, 1)
    details["problems"] = problems
    with open(os.path.join(work, "details.json"), "w") as f:
        json.dump(details, f, indent=2)
    if a.output:
        # Written whether or not the targets were met: the figures are what was measured.
        with open(a.output, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
        say("wrote", a.output)
    print(json.dumps(result, indent=2))
    say("details: %s" % os.path.join(work, "details.json"))
    if problems:
        say("FAILED: %d problems" % len(problems))
        for p in problems[:40]:
            say("  ", p)
        return 1
    if not a.keep and a.work is None:
        shutil.rmtree(work, ignore_errors=True)
    say("reliability: all targets met in %.0f s" % (time.monotonic() - t_all))
    return 0


if __name__ == "__main__":
    sys.exit(main())
