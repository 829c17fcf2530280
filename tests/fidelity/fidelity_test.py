#!/usr/bin/env python3
"""CI subset of the planner's fidelity checks against real JAX/XLA (issue 26, bench/fidelity):
>= 50 mesh cases of the checked-in corpus (the seed's tpu7x case, every examples/ spec, every
20th generated case) asked of JAX with libtpu's topology devices and of Podium's planner, and
five training steps compiled for TPU topologies on this CPU host, whose fits / does-not-fit
verdict Podium's HBM estimate must match. Fails on any disagreement.

Usage: fidelity_test.py --planner build/test/bin/planner_verdicts   (run by ctest with the
project's Python, which has jax[tpu]; see tests/fidelity/CMakeLists.txt)
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench/fidelity"))

import compile_grid  # noqa: E402
import mesh_diff  # noqa: E402


def mesh_subset() -> list[dict]:
    cases = [json.loads(line) for line in open(ROOT / "bench/fidelity/mesh_corpus.jsonl")]
    fixed = [c for c in cases if c["origin"] == "seed" or c["origin"].startswith("examples/")]
    generated = [c for c in cases if c not in fixed]
    return fixed + generated[::20]


# Disagreements found and not fixed yet, each with the verdict pair seen (compiler, Podium) and
# why (docs/planner.md, "Known disagreements"). The entry keeps the suite honest both ways: the
# case fails if either side's verdict changes, so a fix has to remove it from here.
KNOWN_DISAGREEMENTS: dict[str, tuple[tuple[str, str], str]] = {}
# (Resolved: v5e-8/dense-tiny/b16s8192/full, compiler does_not_fit against Podium uncertain. The
# estimate counted the float32 logits alone; the compiler keeps their bfloat16 original too,
# 23.44 of its 23.48 GiB. Podium now estimates does_not_fit.)
# (Resolved: v6e-8/moe-tiny/b16s8192/full, compiler fits at 14.43 GiB of 31.25 against Podium
# does_not_fit at 49.19. The estimate counted the one-hot slots [S, k, X, C] beside the dispatch
# and combine masks, twice; XLA fuses the slots away and keeps one layer's masks once. Podium now
# estimates fits, about 16.4 GiB.)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--planner", required=True)
    args = parser.parse_args()
    passed = failed = 0
    t0 = time.time()

    cases = mesh_subset()
    summary = mesh_diff.run(args.planner, cases)
    for d in summary["disagree"]:
        print(f"FAIL mesh {d['id']} {d['accelerator']} x{d['num_slices']} {d['parallelism']}: "
              f"{d['reason']}")
    passed += summary["agree"]
    failed += len(summary["disagree"])
    print(f"mesh: {summary['agree']}/{summary['cases']} cases agree with JAX "
          f"({summary['seconds']} s)")
    assert summary["cases"] >= 50, summary["cases"]

    compile_cases = compile_grid.grid("ci")
    podium = compile_grid.podium_estimates(args.planner, compile_cases)
    for c in compile_cases:
        compiled = compile_grid.compile_case(c)
        p = podium[c["id"]]
        known = KNOWN_DISAGREEMENTS.get(c["id"])
        if known:
            ok = (compiled["verdict"], p["verdict"]) == known[0]
            label = "known" if ok else "FAIL"
            if ok:
                print(f"known disagreement {c['id']}: {known[1]}")
        else:
            ok = p["verdict"] == compiled["verdict"]
            label = "ok  " if ok else "FAIL"
        print(f"{label} compile {c['id']}: compiler {compiled['verdict']} "
              f"{compiled['gib']:.2f} GiB ({compiled['seconds']} s, {compiled['cpu_seconds']} s CPU), Podium {p['verdict']} "
              f"{p['per_device_gib']:.2f} GiB ({p['low_gib']:.2f}-{p['high_gib']:.2f}) of "
              f"{p['capacity_gib']:.2f}")
        passed += ok
        failed += not ok
    agreeing = [c for c in compile_cases if c["id"] not in KNOWN_DISAGREEMENTS]
    assert len(agreeing) >= 3, len(agreeing)
    print(f"fidelity subset in {time.time() - t0:.1f} s")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
