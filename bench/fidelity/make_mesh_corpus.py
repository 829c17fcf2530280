#!/usr/bin/env python3
"""Writes the differential mesh corpus (bench/fidelity/mesh_corpus.jsonl): accelerator family x
topology (single host to the largest slice Podium's catalog knows) x ICI/DCN parallelism vectors
in MaxText's axis order, valid and invalid, plus the seed's tpu7x 2x4x4 case and every maxtext
spec in examples/. Deterministic (seeded): rerunning it rewrites the same file.

Usage: python3 bench/fidelity/make_mesh_corpus.py [--out FILE]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import pathlib
import random
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Podium's catalog (engine/core/topology/accelerator.cpp): v5e/v6e 1x1 to 16x16; v5p and tpu7x from the
# small shapes to their largest slice (v5p 8960 chips 16x20x28, tpu7x 9216 chips 16x24x24).
SHAPES_3D = ["2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "8x8x8", "8x8x16",
             "8x16x16", "16x16x16", "16x16x24"]
TOPOLOGIES = {
    "v5e": ["1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"],
    "v6e": ["1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"],
    "v5p": SHAPES_3D + ["16x20x28"],
    "tpu7x": SHAPES_3D + ["16x24x24"],
}
DEVICES_PER_CHIP = {"v5e": 1, "v6e": 1, "v5p": 1, "tpu7x": 2}
# Multi-slice cases: these topologies also with 2 and 4 slices.
MULTISLICE = {"v5e": ["2x2", "4x4"], "v6e": ["2x4", "4x4", "8x8"], "v5p": ["2x2x2", "2x4x4", "4x4x4"],
              "tpu7x": ["2x2x1", "2x2x2", "2x4x4", "4x4x4"]}
# Logical axes a run spec sets, by MaxText key (ici_pipeline is the stage axis).
AXES = ["data", "pipeline", "fsdp", "fsdp_transpose", "context", "context_autoregressive", "tensor",
        "tensor_sequence", "expert", "autoregressive"]
COMMON_AXES = ["fsdp", "tensor", "context", "expert", "data", "pipeline"]


def physical_mesh(family: str, topology: str) -> list[int]:
    dims = [int(x) for x in topology.split("x")]
    if len(dims) == 2:
        dims.append(1)
    if DEVICES_PER_CHIP[family] > 1:
        dims.append(DEVICES_PER_CHIP[family])
    return dims


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def random_factorization(rng: random.Random, n: int, parts: int) -> list[int]:
    out = []
    for _ in range(parts - 1):
        d = rng.choice(divisors(n))
        out.append(d)
        n //= d
    out.append(n)
    return out


def aligned_vector(rng: random.Random, phys: list[int]) -> dict[str, int]:
    """Whole physical axes given to a few logical axes: JAX maps these unless its walk order
    takes an axis another logical axis needed."""
    axes = rng.sample(COMMON_AXES, rng.randint(1, min(4, len(COMMON_AXES))))
    sizes = {a: 1 for a in axes}
    for p in phys:
        if p > 1:
            a = rng.choice(axes)
            sizes[a] *= p
    return sizes


def vectors_for(rng: random.Random, family: str, topology: str) -> list[tuple[str, dict, bool]]:
    phys = physical_mesh(family, topology)
    n = math.prod(phys)
    out: list[tuple[str, dict, bool]] = []

    def key(sizes: dict[str, int]) -> dict[str, int]:
        return {f"ici_{a}": v for a, v in sizes.items()}

    out.append(("default_fsdp_fill", {}, False))
    out.append(("fsdp_all", {"ici_fsdp": n}, False))
    for _ in range(6):
        out.append(("aligned", key(aligned_vector(rng, phys)), False))
    for _ in range(8):
        parts = rng.randint(2, 4)
        axes = rng.sample(AXES, parts)
        out.append(("random_factorization", key(dict(zip(axes, random_factorization(rng, n, parts)))),
                    False))
    for _ in range(3):  # one explicit axis left to MaxText's fill (-1)
        parts = rng.randint(2, 3)
        axes = rng.sample(AXES, parts)
        sizes = dict(zip(axes, random_factorization(rng, n, parts)))
        fill_axis = rng.choice(axes)
        sizes[fill_axis] = -1
        if "fsdp" not in sizes:
            sizes["fsdp"] = 1
        out.append(("explicit_fill", key(sizes), False))
    # Invalid: product off by a factor, two -1s, a fill that does not divide, a zero.
    sizes = aligned_vector(rng, phys)
    a = rng.choice(list(sizes))
    sizes[a] *= 2
    sizes.setdefault("fsdp", 1)
    out.append(("product_mismatch", key(sizes), False))
    out.append(("two_fills", {"ici_fsdp": -1, "ici_tensor": -1}, False))
    out.append(("fill_not_dividing", {"ici_tensor": 3 if n % 3 else 7}, False))
    out.append(("zero_value", {"ici_tensor": 0}, False))
    # allow_split_physical_axes on a vector that needs a split axis when there is one.
    parts = rng.randint(2, 3)
    axes = rng.sample(AXES, parts)
    out.append(("allow_split", key(dict(zip(axes, random_factorization(rng, n, parts)))), True))
    return out


def dcn_vectors(rng: random.Random, slices: int) -> list[tuple[str, dict]]:
    return [
        ("dcn_default", {}),
        ("dcn_data", {"dcn_data": slices}),
        ("dcn_fsdp", {"dcn_data": 1, "dcn_fsdp": slices}),
        ("dcn_pipeline_fill", {"dcn_pipeline": -1, "dcn_data": 1}),
        ("dcn_mismatch", {"dcn_data": slices * 2}),
        ("dcn_two_fills", {"dcn_fsdp": -1}),
    ]


def example_cases() -> list[dict]:
    """Every maxtext spec in examples/, on the accelerator its header comment creates."""
    import yaml
    cases = []
    for path in sorted((ROOT / "examples").glob("*.yaml")):
        text = path.read_text()
        spec = yaml.safe_load(text)
        if spec.get("workload", "maxtext") != "maxtext":
            continue
        m = re.search(r"--accelerator (\S+)(?: --num-slices (\d+))?", text)
        if not m:
            raise SystemExit(f"{path}: no 'Cluster: ... --accelerator' comment to take the slice from")
        accelerator, slices = m.group(1), int(m.group(2) or spec.get("num_slices") or 1)
        cases.append({"origin": f"examples/{path.name}", "accelerator": accelerator,
                      "num_slices": slices, "parallelism": spec.get("parallelism", {}),
                      "allow_split_physical_axes": bool(
                          (spec.get("config") or {}).get("allow_split_physical_axes", False))})
    return cases


# Podium's slice names of the examples' accelerators -> (family, topology, devices per slice).
EXAMPLE_SLICES = {
    "tpu7x-64": ("tpu7x", "2x4x4", 64),
    "v6e-8": ("v6e", "2x4", 8),
    "v6e-16": ("v6e", "4x4", 16),
    "h100-mega-80gb-8": ("h100", "", 8),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "bench/fidelity/mesh_corpus.jsonl"))
    args = parser.parse_args()
    rng = random.Random(26)
    cases: list[dict] = []

    def add(origin, family, topology, slices, parallelism, split, accelerator=None, devices=None):
        phys = physical_mesh(family, topology) if topology else [devices]
        cases.append({
            "id": f"{len(cases):05d}", "origin": origin, "family": family, "topology": topology,
            "accelerator": accelerator or f"{family}-{topology}", "num_slices": slices,
            "devices_per_slice": devices or math.prod(phys), "parallelism": parallelism,
            "allow_split_physical_axes": split})

    # The seed's case (issue 26): tpu7x 2x4x4, fsdp 8 x tensor 4 x context 2.
    add("seed", "tpu7x", "2x4x4", 1, {"ici_fsdp": 8, "ici_tensor": 4, "ici_context": 2}, False)
    for example in example_cases():
        family, topology, devices = EXAMPLE_SLICES[example["accelerator"]]
        add(example["origin"], family, topology, example["num_slices"], example["parallelism"],
            example["allow_split_physical_axes"], accelerator=example["accelerator"],
            devices=devices)
    for family, topologies in TOPOLOGIES.items():
        for topology in topologies:
            for origin, parallelism, split in vectors_for(rng, family, topology):
                add(origin, family, topology, 1, parallelism, split)
    for family, topologies in MULTISLICE.items():
        for topology, slices in itertools.product(topologies, (2, 4)):
            ici = vectors_for(rng, family, topology)
            for (origin, dcn), (ici_origin, ici_values, split) in zip(
                    dcn_vectors(rng, slices), [ici[0], ici[2], ici[3], ici[8], ici[2], ici[4]]):
                add(f"{origin}+{ici_origin}", family, topology, slices, {**ici_values, **dcn}, split)
    with open(args.out, "w") as f:
        for case in cases:
            f.write(json.dumps(case, sort_keys=True) + "\n")
    print(f"{len(cases)} cases -> {args.out}")


if __name__ == "__main__":
    main()
