"""Checkpoints in MaxText's layout: <base_output_directory>/<run_name>/checkpoints/<step>/.

A checkpoint is written into a temporary sibling directory named like Orbax's
(`<step>.orbax-checkpoint-tmp-<microseconds>`), its files and the directory are fsynced, and
only then is it renamed to the plain step number (and the parent fsynced). A directory whose
name is a plain integer is therefore always complete; anything else (a save cut short by
SIGTERM, a crash, a full disk) is never mistaken for a checkpoint, by this trainer or by
Podium.

The number is the count of completed steps: checkpoint 10 holds the state after steps 0..9,
and a run resumed from it continues with step 10.
"""

import io
import json
import os
import re
import shutil
import time

import torch

STATE_FILE = "state.pt"
METADATA_FILE = "metadata.json"
FORMAT = "podium-reference-checkpoint/1"
_FINISHED = re.compile(r"^[0-9]+$")


_URI = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://(.+)$")
OBJECT_STORE_ENV = "PODIUM_REFERENCE_OBJECT_STORE"


def checkpoint_root(base_output_directory, run_name):
    return os.path.join(base_output_directory, run_name, "checkpoints")


def local_root(root, environ=os.environ):
    """The directory on this host that holds the checkpoints named by `root`.

    A local path is itself. A URI (gs://bucket/dir, s3://...) names an object store this trainer
    has no client for: PODIUM_REFERENCE_OBJECT_STORE names a local directory standing in for
    every bucket (<store>/<scheme>/<bucket>/<path>), shared by the hosts as a bucket would be.
    The trainer still prints the URI in its checkpoint lines, as MaxText does, so Podium learns
    saves and restores from the log, never by listing that directory.
    """
    match = _URI.match(root)
    if not match or match.group(1).lower() == "file":
        return match.group(2) if match else root
    store = environ.get(OBJECT_STORE_ENV)
    if not store:
        raise ValueError(f"base_output_directory {root} is a URI: the reference trainer has no "
                         f"object-store client and writes URIs only under {OBJECT_STORE_ENV} "
                         f"(a local directory standing in for the store)")
    return os.path.join(store, match.group(1).lower(), match.group(2))


def finished_steps(root):
    """Sorted steps of finished checkpoints under `root` (empty if it does not exist)."""
    try:
        names = os.listdir(root)
    except FileNotFoundError:
        return []
    return sorted(int(n) for n in names if _FINISHED.match(n) and os.path.isdir(os.path.join(root, n)))


def latest_step(root):
    steps = finished_steps(root)
    return steps[-1] if steps else None


def _fsync_path(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def save(root, step, payload, metadata):
    """Write checkpoint `step` atomically; returns its final path, or None if it already exists.

    An existing checkpoint with the same number is left untouched (another process, e.g. a
    stale attempt, finished it first) rather than replaced under a reader's feet.
    """
    os.makedirs(root, exist_ok=True)
    final = os.path.join(root, str(step))
    tmp = os.path.join(root, f"{step}.orbax-checkpoint-tmp-{time.time_ns() // 1000}")
    os.mkdir(tmp)
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    _write_file(os.path.join(tmp, STATE_FILE), buffer.getvalue())
    _write_file(os.path.join(tmp, METADATA_FILE),
                (json.dumps(dict(metadata, format=FORMAT, step=step), indent=2, sort_keys=True) + "\n").encode())
    _fsync_path(tmp)
    if os.path.exists(final):
        shutil.rmtree(tmp, ignore_errors=True)
        return None
    os.rename(tmp, final)
    _fsync_path(root)
    return final


def read_state_bytes(root, step):
    with open(os.path.join(root, str(step), STATE_FILE), "rb") as f:
        return f.read()


def load_state_bytes(data):
    payload = torch.load(io.BytesIO(data), map_location="cpu")
    if payload.get("format") != FORMAT:
        raise ValueError(f"Unsupported checkpoint format {payload.get('format')!r}")
    return payload
