"""Orbax checkpoints in MaxText's layout: <base_output_directory>/<run_name>/checkpoints/<N>/.

An orbax.checkpoint.CheckpointManager writes step N into a temporary sibling directory
(`<N>.orbax-checkpoint-tmp-<n>`) and renames it to the plain number once every process has
written its shards, so a directory named by a plain integer is always complete, for this
trainer and for Podium's agents. Each step holds two items: `state` (the sharded params and
AdamW state, restored onto whatever mesh the resuming run has) and `meta` (JSON: the data
position in bytes, model_name, ...).

The number is the count of completed steps: checkpoint 10 holds the state after steps 0..9,
and a run resumed from it continues with step 10 (Podium's convention for this workload;
MaxText numbers a checkpoint by the step it was taken after).

With several processes every one of them calls save and restore (Orbax's collective
protocol), and all of them must see the same directory: the same absolute path on one
machine, a shared filesystem or a bucket on a cluster.
"""

import os
import re

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


def manager(directory):
    """A synchronous CheckpointManager over `directory` (created if missing); keeps every step."""
    import orbax.checkpoint as ocp

    options = ocp.CheckpointManagerOptions(create=True, enable_async_checkpointing=False)
    return ocp.CheckpointManager(os.path.abspath(directory), options=options,
                                 item_names=("state", "meta"))


def save(mngr, step, state, meta):
    """Save step `step`; False (nothing written) when a finished checkpoint `step` exists."""
    import orbax.checkpoint as ocp

    if step in mngr.all_steps():
        return False
    mngr.save(step, args=ocp.args.Composite(state=ocp.args.StandardSave(state),
                                            meta=ocp.args.JsonSave(meta)), force=True)
    mngr.wait_until_finished()
    return True


def restore(mngr, step, abstract_state):
    """(state, meta) of checkpoint `step`, the state laid out as `abstract_state` says."""
    import orbax.checkpoint as ocp

    restored = mngr.restore(step, args=ocp.args.Composite(state=ocp.args.StandardRestore(abstract_state),
                                                          meta=ocp.args.JsonRestore()))
    return restored["state"], restored["meta"]


def step_of_directory(directory):
    """The step a checkpoint step directory stands for (<...>/checkpoints/<N> -> N)."""
    name = os.path.basename(os.path.normpath(directory))
    if not name.isdigit():
        raise ValueError(f"--init-from {directory}: not a checkpoint step directory (its name must be the step number)")
    return int(name)


def restore_params_from(directory, abstract_state, model_name):
    """(params, step) of the finished checkpoint at `directory` (another run's step directory,
    local or a URI under PODIUM_REFERENCE_OBJECT_STORE), as MaxText's load_parameters_path:
    only the parameters are used; the optimizer starts afresh."""
    step = step_of_directory(directory)
    local = local_root(os.path.normpath(directory))
    if not os.path.isdir(local):
        raise FileNotFoundError(f"--init-from {directory}: no such checkpoint directory ({local})")
    mngr = manager(os.path.dirname(local))
    try:
        import orbax.checkpoint as ocp

        if step not in mngr.all_steps():
            raise FileNotFoundError(f"--init-from {directory}: not a finished checkpoint")
        # The model first: another model's arrays would fail inside Orbax with a shape error.
        meta = mngr.restore(step, args=ocp.args.Composite(meta=ocp.args.JsonRestore()))["meta"]
        if meta.get("model_name") != model_name:
            raise ValueError(f"--init-from {directory} is a checkpoint of model_name={meta.get('model_name')}, "
                             f"not {model_name}")
        state, _ = restore(mngr, step, abstract_state)
    finally:
        mngr.close()
    return state["params"], step
