"""Podium's reference trainer: MaxText's command line, log lines and checkpoints, on JAX.

    python -m podium_reference.train <config.yml> key=value ...   [--compile-only] [--init-from DIR]

--init-from DIR starts a new run from another run's finished checkpoint (a step directory
<...>/checkpoints/<N>): its parameters, a fresh optimizer, training from step N on this run's
data, like MaxText's load_parameters_path. A run with checkpoints of its own resumes from them
instead (a restart), as MaxText does.

Every process prints the same lines on stdout, one flushed line each, in MaxText's wording:
"number parameters: ...", "Per train step: Total TFLOPs: ...", the compiler's
"Total memory size: ...", "Memstats: ...", one "completed step: N, seconds: ...,
TFLOP/s/device: ..., Tokens/s/device: ..., total_weights: ..., loss: ..." per step, and the
checkpoint restore/save messages. Exit codes: 0 when all steps are done; 1 on any error
(config, missing data, a mesh JAX cannot build, a peer that never shows up, StopIteration when
the dataset runs out, a NaN loss); killed by SIGTERM on preemption.
"""

import ctypes
import math
import os
import signal
import sys
import threading
import time

from podium_reference import catalog
from podium_reference import config as config_lib
from podium_reference import distributed


def log(message):
    print(message, flush=True)


class _Progress:
    """What the SIGTERM thread reports; written by the main thread only."""

    latest_checkpoint = None


def install_sigterm_guard(progress):
    """Exit promptly on SIGTERM, with one log line saying so, and never save on the way out.

    A Python-level signal handler only runs between bytecodes of the main thread, so it would
    wait for a running XLA computation or a collective blocked on a dead peer. Instead SIGTERM
    is blocked here, before JAX starts its threads (they inherit the mask), and a dedicated
    thread takes it with sigwait(), logs, restores the default action (JAX's coordination
    client may have installed a preemption handler meanwhile) and re-raises it: the process
    dies of SIGTERM at once, which is what Podium's worker expects to see for a preemption. A
    checkpoint being written at that moment stays Orbax's temporary directory and is never
    taken for a finished one.
    """
    if signal.getsignal(signal.SIGTERM) == signal.SIG_IGN:
        return  # the parent asked for SIGTERM to be ignored; respect that
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})

    def wait_for_sigterm():
        signal.sigwait({signal.SIGTERM})
        # os.write, not print: the main thread may hold sys.stdout's lock right now.
        os.write(1, (f"Received SIGTERM: exiting without saving a checkpoint (latest finished checkpoint: "
                     f"{progress.latest_checkpoint})\n").encode())
        # signal.signal() works on the main thread only; libc's signal() works from any thread.
        ctypes.CDLL(None).signal(signal.SIGTERM, ctypes.c_void_p(0))  # SIG_DFL
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10)  # unreachable unless SIGTERM's action was changed meanwhile
        os._exit(128 + signal.SIGTERM)

    threading.Thread(target=wait_for_sigterm, name="sigterm", daemon=True).start()


def _resolve_run_name(cfg, process_count):
    if cfg.run_name:
        return
    jobset = os.environ.get("JOBSET_NAME", "").strip()
    if jobset:
        cfg["run_name"] = jobset
    elif process_count == 1:
        cfg["run_name"] = "reference-" + time.strftime("%Y-%m-%d-%H-%M-%S")
    else:
        # Each process would invent a different name and they would not share checkpoints.
        raise ValueError("run_name must be set when more than one process trains together")


def use_cpu_unless_told():
    # The reference trains on CPU devices; a host with libtpu would otherwise probe for TPUs.
    os.environ.setdefault("JAX_PLATFORMS", "cpu")


def print_mem_stats(label):
    """MaxText's max_utils.print_mem_stats, wording included (CPU devices have no stats)."""
    import jax

    log(f"\nMemstats: {label}:")
    try:
        for d in jax.local_devices():
            stats = d.memory_stats()
            used = round(stats["bytes_in_use"] / 2**30, 2)
            limit = round(stats["bytes_limit"] / 2**30, 2)
            log(f"\tUsing (GB) {used} / {limit} ({used / limit:%}) on {d}")
    except (RuntimeError, KeyError, TypeError) as ex:
        log(f"\tMemstats unavailable, error: {ex}")


def print_compiled_memory_stats(stats):
    """MaxText's max_utils.print_compiled_memory_stats, with six decimals instead of one so
    that the reference models' kilobytes and megabytes do not print as 0.0 GB (GB here is
    2**30 bytes, as in MaxText)."""
    if stats is None:
        return

    def gb(n):
        return n / 2**30

    total = gb(stats.output_size_in_bytes + stats.temp_size_in_bytes + stats.argument_size_in_bytes
               - stats.alias_size_in_bytes)
    log(f"Total memory size: {total:.6f} GB, Output size: {gb(stats.output_size_in_bytes):.6f} GB, "
        f"Temp size: {gb(stats.temp_size_in_bytes):.6f} GB, Argument size: {gb(stats.argument_size_in_bytes):.6f} GB, "
        f"Host temp size: {gb(stats.host_temp_size_in_bytes):.6f} GB.")


def build_mesh(cfg, env):
    """The run's jax.sharding.Mesh over every process's devices (see mesh.py)."""
    import jax
    import numpy as np
    from jax.sharding import Mesh

    from podium_reference import mesh as mesh_lib

    num_slices = cfg.num_slices if cfg.num_slices != -1 else env.num_slices
    count = jax.process_count()
    if num_slices > 1 and count > 1:
        from jax.experimental import multihost_utils

        # Every process tells its slice; CPU devices carry no slice_index.
        slice_ids = np.asarray(multihost_utils.process_allgather(np.int32(env.slice_id))).reshape(-1)
        slice_of = lambda d: int(slice_ids[d.process_index])  # noqa: E731
    else:
        slice_of = lambda d: 0 if num_slices == 1 else d.id * num_slices // jax.device_count()  # noqa: E731
    ici, dcn = mesh_lib.shapes(cfg, jax.device_count(), num_slices)
    devices = mesh_lib.device_array(jax.devices(), ici, dcn, slice_of)
    return Mesh(devices, mesh_lib.MESH_AXES), num_slices


def split_init_from(args):
    """(args without --init-from, its directory or None): `--init-from DIR` or `--init-from=DIR`."""
    rest, init_from = [], None
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--init-from":
            if i + 1 >= len(args) or not args[i + 1]:
                raise ValueError("--init-from needs a checkpoint step directory")
            init_from = args[i + 1]
            i += 2
            continue
        if a.startswith("--init-from="):
            init_from = a[len("--init-from="):]
            if not init_from:
                raise ValueError("--init-from needs a checkpoint step directory")
        else:
            rest.append(a)
        i += 1
    return rest, init_from


def main(argv=None, sigterm_guard=True):
    argv = sys.argv if argv is None else argv
    if hasattr(sys.stdout, "reconfigure"):  # not when a test captures stdout
        sys.stdout.reconfigure(line_buffering=True)
    all_args, init_from = split_init_from(argv[1:])
    args = [a for a in all_args if a != "--compile-only"]
    if len(args) != len(all_args):
        cfg = config_lib.load(args, require_dataset=False)
        from podium_reference import compile_only

        return compile_only.run(cfg)
    cfg = config_lib.load(args)
    progress = _Progress()
    if sigterm_guard:
        install_sigterm_guard(progress)

    env = distributed.resolve(os.environ)
    _resolve_run_name(cfg, env.process_count)
    for key, value in cfg.items():
        log(f"Config param {key}: {value}")
    if not os.path.isfile(cfg.dataset_path):
        raise FileNotFoundError(f"dataset_path {cfg.dataset_path} is not a file")

    # JAX is imported only now: config errors above fail fast, and the SIGTERM mask is in
    # place before JAX creates any thread.
    use_cpu_unless_told()
    import jax
    import numpy as np

    from podium_reference import checkpoint, data
    from podium_reference import mesh as mesh_lib
    from podium_reference.state import Trainer, num_params

    if env.process_count > 1:
        log(f"Initializing jax.distributed: process {env.process_id} of {env.process_count}, coordinator "
            f"{env.coordinator_address}, timeout {cfg.distributed_timeout_seconds} s")
        # Collectives between the processes' CPU devices: gloo over TCP (JAX's default for CPU
        # today; said explicitly so that a change of default cannot leave them without any).
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        jax.distributed.initialize(coordinator_address=env.coordinator_address,
                                   num_processes=env.process_count, process_id=env.process_id,
                                   initialization_timeout=cfg.distributed_timeout_seconds)
        log(f"jax.distributed initialized: process {jax.process_index()} of {jax.process_count()}, "
            f"{jax.device_count()} global devices ({jax.local_device_count()} local)")
    else:
        log(f"Single process (JAX_PROCESS_COUNT=1): process 0 of 1, {jax.device_count()} global devices "
            f"({jax.local_device_count()} local), no jax.distributed")
    log(f"System Information: Jax Version: {jax.__version__}, platform {jax.devices()[0].platform}")

    mesh, num_slices = build_mesh(cfg, env)
    log(f"Mesh ({num_slices} slice{'s' if num_slices != 1 else ''}): {mesh_lib.describe(mesh)}")

    dims = catalog.get_dims(cfg.model_name)
    trainer = Trainer(dims, cfg.learning_rate, mesh)

    # `root` is what the log names (a URI for remote outputs, as in MaxText); `store` is where
    # this host reads and writes it.
    root = checkpoint.checkpoint_root(cfg.base_output_directory, cfg.run_name)
    start_step, position, state, mngr = 0, 0, None, None
    if cfg.enable_checkpointing:
        log("checkpoint manager exists so trying to load this run's existing checkpoint")
        mngr = checkpoint.manager(checkpoint.local_root(root))
        latest = mngr.latest_step()
        if latest is None:
            log("No existing checkpoints found, not restoring checkpoint.")
        else:
            state, meta = checkpoint.restore(mngr, latest, trainer.abstract_state_with_shardings())
            if meta["model_name"] != cfg.model_name:
                raise ValueError(f"Checkpoint {latest} in {root} is for model_name={meta['model_name']}, "
                                 f"not {cfg.model_name}")
            log(f"restoring from this run's directory step {latest}")
            start_step, position = latest, int(meta["data_position"])
            progress.latest_checkpoint = latest
    else:
        log("enable_checkpointing is false: not restoring or saving checkpoints")
    if state is None:
        state = trainer.init_state(cfg.seed)
        if init_from:
            params, start_step = checkpoint.restore_params_from(
                init_from, trainer.abstract_state_with_shardings(), cfg.model_name)
            state = {"params": params, "opt_state": state["opt_state"]}
            # Worded without "restoring": Podium reads that word as this run resuming its own checkpoint.
            log(f"init_from: parameters of {init_from} loaded; training from step {start_step}")

    n_params = num_params(state["params"])
    assert n_params == catalog.param_count(dims), "catalog.param_count disagrees with the flax model"
    log(f"Model {dims.name}: {dims.num_decoder_layers} layers, emb_dim {dims.emb_dim}, "
        f"{dims.num_query_heads} heads of {dims.head_dim}, mlp_dim {dims.mlp_dim}, vocab {dims.vocab_size}, "
        f"{n_params:,} parameters")
    log(f"number parameters: {n_params / 1e9:.3f} billion")
    print_mem_stats("After params initialized")

    devices = jax.device_count()
    global_batch = cfg.per_device_batch_size * devices
    batch_shape = (cfg.gradient_accumulation_steps, global_batch, cfg.max_target_length + 1)
    compiled = trainer.lower(batch_shape).compile()
    print_compiled_memory_stats(compiled.memory_analysis())

    flops, learnable, attention = catalog.training_flops_per_device(
        dims, cfg.per_device_batch_size, cfg.max_target_length, cfg.gradient_accumulation_steps)
    log(f"Per train step: Total TFLOPs: {flops / 1e12:.2f} split as {100 * learnable / flops:.2f}% "
        f"learnable weight flops and {100 * attention / flops:.2f}% attention flops")
    log(f"Per train step per device: {flops:,.0f} FLOPs ({learnable:,.0f} learnable weight, "
        f"{attention:,.0f} attention)")

    rows = data.process_rows(trainer.batch_sharding, batch_shape)
    batches = data.ByteBatchIterator(cfg.dataset_path, global_batch, cfg.max_target_length,
                                     cfg.gradient_accumulation_steps, rows=rows, position=position,
                                     first_step=start_step)
    tokens_per_device = cfg.per_device_batch_size * cfg.max_target_length * cfg.gradient_accumulation_steps
    total_weights = tokens_per_device * devices  # target tokens in the global batch
    if start_step >= cfg.steps:
        log(f"Checkpoint {start_step} already covers steps={cfg.steps}: nothing to train")

    last = time.perf_counter()
    for step in range(start_step, cfg.steps):
        # Not a for-loop over the iterator on purpose: when the data runs out, StopIteration
        # escapes with its traceback and exit code 1, as MaxText's data iterator does.
        local = next(batches)
        batch = jax.make_array_from_process_local_data(trainer.batch_sharding, local, batch_shape)
        state, loss = compiled(state, batch)
        # The loss is replicated: this process's copy is the global mean.
        loss_value = float(np.asarray(loss.addressable_data(0)))
        if not math.isfinite(loss_value):
            log("Aborting training due to NaN loss.")
            sys.exit(1)

        now = time.perf_counter()
        seconds, last = now - last, now
        log(f"completed step: {step}, seconds: {seconds:.3f}, "
            f"TFLOP/s/device: {flops / 1e12 / seconds:.3f}, "
            f"Tokens/s/device: {tokens_per_device / seconds:.3f}, "
            f"total_weights: {total_weights}, loss: {loss_value:.3f}")

        completed = step + 1
        if cfg.enable_checkpointing and (completed % cfg.checkpoint_period == 0 or completed == cfg.steps):
            meta = {"data_position": batches.position, "model_name": cfg.model_name, "run_name": cfg.run_name,
                    "process_count": jax.process_count(), "device_count": devices,
                    "num_parameters": n_params, "saved_at_unix": time.time()}
            if checkpoint.save(mngr, completed, state, meta):
                if jax.process_index() == 0:
                    log(f"Finished saving checkpoint to `{root}/{completed}`.")
                    log(f"Saved a checkpoint at step {completed}.")
            else:
                log(f"Checkpoint {completed} already exists in {root}, not overwriting it")
            progress.latest_checkpoint = completed

    batches.close()
    if mngr is not None:
        mngr.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
