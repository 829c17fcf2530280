#!/usr/bin/env python3
"""Write a deterministic English text dataset of an exact size, for the reference workload.

    python3 engine/workloads/reference/make_dataset.py OUTPUT --size 512K [--seed 0]

The text is built from fixed sentence templates and word lists with a seeded generator, so
the same size and seed always give the same bytes (demos and tests are reproducible) and no
network access is needed. It is plain ASCII, repetitive enough that a small byte-level model
learns it visibly within tens of steps, varied enough that the loss does not collapse at once.
Standard library only: any Python 3 can run it.

How many bytes a run needs: steps x processes x per_device_batch_size x
gradient_accumulation_steps x (max_target_length + 1). With less, the trainer stops with
StopIteration after the steps the data could feed.
"""

import argparse
import os
import random
import sys

SUBJECTS = [
    "the engineer", "a researcher", "the scheduler", "our team", "the operator", "a student",
    "the cluster", "every worker", "the planner", "an old friend", "the night shift", "the library",
]
VERBS = [
    "checks", "restarts", "measures", "writes", "reads", "compares", "plans", "repairs",
    "watches", "describes", "moves", "counts",
]
OBJECTS = [
    "the training run", "a long report", "the loss curve", "every checkpoint", "the garden",
    "a quiet river", "the step time", "the data files", "a small model", "the morning train",
    "the red notebook", "the mountain road",
]
PLACES = [
    "in the morning", "before lunch", "after the rain", "near the harbour", "at the office",
    "under the bridge", "during the night", "on the third floor", "by the window", "at noon",
]
ADJECTIVES = ["careful", "slow", "bright", "patient", "quiet", "steady", "curious", "tired", "honest", "busy"]
TEMPLATES = [
    "{S} {V} {O} {P}.",
    "{Sc} {V} {O}, and then {s2} {V2} {O2}.",
    "When {s} {V} {O}, {s2} {V2} {O2} {P}.",
    "{Sc} is {A}, so {s2} {V2} {O} again.",
    "It was a {A} day; {s} {V} {O} {P}.",
    "Nobody knew why {s} {V} {O}, but {s2} was {A2}.",
    "{Sc} {V} {O} twice, because {O2} was {A}.",
]


def _sentence(rng):
    s, s2 = rng.choice(SUBJECTS), rng.choice(SUBJECTS)
    fields = {
        "s": s, "S": s, "Sc": s[0].upper() + s[1:], "s2": s2,
        "V": rng.choice(VERBS), "V2": rng.choice(VERBS),
        "O": rng.choice(OBJECTS), "O2": rng.choice(OBJECTS),
        "P": rng.choice(PLACES), "A": rng.choice(ADJECTIVES), "A2": rng.choice(ADJECTIVES),
    }
    text = rng.choice(TEMPLATES).format(**fields)
    return text[0].upper() + text[1:]


def generate(size, seed=0):
    """Exactly `size` bytes of text; a prefix of the output for any larger size."""
    rng = random.Random(seed)
    parts, length = [], 0
    while length < size:
        paragraph = " ".join(_sentence(rng) for _ in range(rng.randint(3, 7))) + "\n\n"
        parts.append(paragraph)
        length += len(paragraph)
    return "".join(parts).encode("ascii")[:size]


def parse_size(text):
    """Bytes from '300000', '300K', '1.5M' (K = 1024, M = 1024^2)."""
    text = text.strip().upper()
    scale = 1
    if text and text[-1] in "KM":
        scale = 1024 if text[-1] == "K" else 1024 * 1024
        text = text[:-1]
    size = int(float(text) * scale)
    if size < 0:
        raise ValueError("size must not be negative")
    return size


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", help="file to write (parent directories are created)")
    parser.add_argument("--size", default="512K", help="bytes to write: 300000, 300K, 1.5M (default 512K)")
    parser.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    args = parser.parse_args(argv)
    try:
        size = parse_size(args.size)
    except ValueError as e:
        parser.error(f"invalid --size {args.size!r}: {e}")
    parent = os.path.dirname(os.path.abspath(args.output))
    os.makedirs(parent, exist_ok=True)
    data = generate(size, args.seed)
    # Written under a temporary name and renamed, so a reader never sees a half-written file.
    tmp = f"{args.output}.tmp-{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, args.output)
    print(f"wrote {len(data)} bytes to {args.output} (seed {args.seed})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
