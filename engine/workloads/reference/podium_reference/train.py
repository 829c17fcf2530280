"""Podium's reference trainer: MaxText's command line, log lines and checkpoints, in torch.

    /usr/bin/python3 -m podium_reference.train <config.yml> key=value ...

Every rank prints the same lines on stdout, one flushed line each, in MaxText's wording:
"number parameters: ...", "Per train step: Total TFLOPs: ...", one
"completed step: N, seconds: ..., TFLOP/s/device: ..., Tokens/s/device: ...,
total_weights: ..., loss: ..." per step, and the checkpoint restore/save messages.
Exit codes: 0 when all steps are done; 1 on any error (config, missing data, a peer that
never shows up, StopIteration when the dataset runs out); killed by SIGTERM on preemption.
"""

import math
import os
import signal
import sys
import threading
import time
from datetime import timedelta

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

    A Python-level signal handler only runs between bytecodes of the main thread, so it
    would wait for a running torch op or a gloo collective blocked on a dead peer (up to
    distributed_timeout_seconds). Instead SIGTERM is blocked here, before torch starts its
    threads (they inherit the mask), and a dedicated thread takes it with sigwait(), logs,
    and re-raises it with the default action: the process dies of SIGTERM at once, which
    is what Podium's worker expects to see for a preemption. A checkpoint being written at
    that moment stays a temporary directory and is never taken for a finished one.
    """
    if signal.getsignal(signal.SIGTERM) == signal.SIG_IGN:
        return  # the parent asked for SIGTERM to be ignored; respect that
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})

    def wait_for_sigterm():
        signal.sigwait({signal.SIGTERM})
        # os.write, not print: the main thread may hold sys.stdout's lock right now.
        os.write(1, (f"Received SIGTERM: exiting without saving a checkpoint (latest finished checkpoint: "
                     f"{progress.latest_checkpoint})\n").encode())
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10)  # unreachable unless SIGTERM's action was changed meanwhile
        os._exit(128 + signal.SIGTERM)

    threading.Thread(target=wait_for_sigterm, name="sigterm", daemon=True).start()


def _resolve_run_name(cfg, world_size):
    if cfg.run_name:
        return
    jobset = os.environ.get("JOBSET_NAME", "").strip()
    if jobset:
        cfg["run_name"] = jobset
    elif world_size == 1:
        cfg["run_name"] = "reference-" + time.strftime("%Y-%m-%d-%H-%M-%S")
    else:
        # Each rank would invent a different name and they would not share checkpoints.
        raise ValueError("run_name must be set when more than one process trains together")


def _compile_only(args):
    """MaxText.train_compile's counterpart: the step's memory, no training, no data read."""
    cfg = config_lib.load(args)
    for key, value in cfg.items():
        log(f"Config param {key}: {value}")
    from podium_reference import compile_only

    log(f"Compiling the training step of {cfg.model_name} for per_device_batch_size="
        f"{cfg.per_device_batch_size}, max_target_length={cfg.max_target_length}")
    sizes = compile_only.memory_bytes(cfg.model_name, cfg.per_device_batch_size,
                                      cfg.max_target_length)
    log(compile_only.format_line(sizes))
    log("Compiled the training step; nothing trained (--compile-only)")
    return 0


def main(argv=None, sigterm_guard=True):
    argv = sys.argv if argv is None else argv
    sys.stdout.reconfigure(line_buffering=True)
    if "--compile-only" in argv[1:]:
        return _compile_only([a for a in argv[1:] if a != "--compile-only"])
    cfg = config_lib.load(argv[1:])
    progress = _Progress()
    if sigterm_guard:
        install_sigterm_guard(progress)

    # torch is imported only now: config errors above fail fast, and the SIGTERM mask is in
    # place before torch creates any thread.
    import torch
    import torch.distributed as dist

    from podium_reference import checkpoint, data
    from podium_reference.model import GPT

    env = distributed.resolve(os.environ)
    _resolve_run_name(cfg, env.world_size)
    for key, value in cfg.items():
        log(f"Config param {key}: {value}")
    if not os.path.isfile(cfg.dataset_path):
        raise FileNotFoundError(f"dataset_path {cfg.dataset_path} is not a file")

    world, rank = env.world_size, env.rank
    if world > 1:
        log(f"Initializing torch.distributed (gloo): rank {rank} of {world}, coordinator "
            f"{env.master_addr}:{env.master_port}, timeout {cfg.distributed_timeout_seconds} s")
        dist.init_process_group("gloo", init_method=env.init_method, rank=rank, world_size=world,
                                timeout=timedelta(seconds=cfg.distributed_timeout_seconds))
        log(f"torch.distributed initialized: process {rank} of {world}")
    else:
        log("Single process (WORLD_SIZE=1): no process group")

    dims = catalog.get_dims(cfg.model_name)
    torch.manual_seed(cfg.seed)
    model = GPT(dims)
    params = list(model.parameters())
    # AdamW with MaxText's default betas; no weight decay and a constant rate keep the
    # trajectory simple enough that a resumed run can be compared with an uninterrupted one.
    optimizer = torch.optim.AdamW(params, lr=cfg.learning_rate, betas=(0.9, 0.95), weight_decay=0.0)

    # `root` is what the log names (a URI for remote outputs, as in MaxText); `store` is where
    # this host reads and writes it.
    root = checkpoint.checkpoint_root(cfg.base_output_directory, cfg.run_name)
    store = checkpoint.local_root(root)
    start_step, position = 0, 0
    if cfg.enable_checkpointing:
        log("checkpoint manager exists so trying to load this run's existing checkpoint")
        # Rank 0 chooses and reads the checkpoint and sends it to everyone: ranks then agree
        # on the step even if their hosts do not share base_output_directory.
        blob = None
        if rank == 0:
            step = checkpoint.latest_step(store)
            blob = checkpoint.read_state_bytes(store, step) if step is not None else None
        if world > 1:
            box = [blob]
            dist.broadcast_object_list(box, src=0)
            blob = box[0]
        if blob is None:
            log("No existing checkpoints found, not restoring checkpoint.")
        else:
            payload = checkpoint.load_state_bytes(blob)
            if payload["model_name"] != cfg.model_name:
                raise ValueError(f"Checkpoint {payload['step']} in {root} is for model_name={payload['model_name']}, "
                                 f"not {cfg.model_name}")
            log(f"restoring from this run's directory step {payload['step']}")
            model.load_state_dict(payload["model"])
            optimizer.load_state_dict(payload["optimizer"])
            start_step, position = payload["step"], payload["data_position"]
            progress.latest_checkpoint = start_step
        del blob
    else:
        log("enable_checkpointing is false: not restoring or saving checkpoints")
    if world > 1:
        # Same seed gives the same initial weights everywhere; broadcasting makes it certain.
        with torch.no_grad():
            for p in params:
                dist.broadcast(p, src=0)

    n_params = sum(p.numel() for p in params)
    assert n_params == catalog.param_count(dims), "catalog.param_count disagrees with the torch model"
    log(f"Model {dims.name}: {dims.num_decoder_layers} layers, emb_dim {dims.emb_dim}, "
        f"{dims.num_query_heads} heads of {dims.head_dim}, mlp_dim {dims.mlp_dim}, vocab {dims.vocab_size}, "
        f"{n_params:,} parameters")
    log(f"number parameters: {n_params / 1e9:.3f} billion")
    flops, learnable, attention = catalog.training_flops_per_device(
        dims, cfg.per_device_batch_size, cfg.max_target_length, cfg.gradient_accumulation_steps)
    log(f"Per train step: Total TFLOPs: {flops / 1e12:.2f} split as {100 * learnable / flops:.2f}% "
        f"learnable weight flops and {100 * attention / flops:.2f}% attention flops")
    log(f"Per train step per device: {flops:,.0f} FLOPs ({learnable:,.0f} learnable weight, "
        f"{attention:,.0f} attention)")

    batches = data.ByteBatchIterator(cfg.dataset_path, rank, world, cfg.per_device_batch_size,
                                     cfg.max_target_length, cfg.gradient_accumulation_steps,
                                     position=position, first_step=start_step)
    tokens_per_device = cfg.per_device_batch_size * cfg.max_target_length * cfg.gradient_accumulation_steps
    total_weights = tokens_per_device * world  # target tokens in the global batch
    if start_step >= cfg.steps:
        log(f"Checkpoint {start_step} already covers steps={cfg.steps}: nothing to train")

    last = time.perf_counter()
    for step in range(start_step, cfg.steps):
        # Not a for-loop over the iterator on purpose: when the data runs out, StopIteration
        # escapes with its traceback and exit code 1, as MaxText's data iterator does.
        micro_batches = next(batches)
        optimizer.zero_grad(set_to_none=False)
        loss_sum = torch.zeros(())
        for sequences in micro_batches:
            loss = model.loss(sequences) / len(micro_batches)
            loss.backward()
            loss_sum += loss.detach()
        if world > 1:
            # One collective per step: all gradients and the loss, averaged over ranks.
            flat = torch.cat([p.grad.reshape(-1) for p in params] + [loss_sum.reshape(1)])
            dist.all_reduce(flat)
            flat /= world
            offset = 0
            for p in params:
                p.grad.copy_(flat[offset:offset + p.numel()].view_as(p.grad))
                offset += p.numel()
            loss_value = flat[-1].item()
        else:
            loss_value = loss_sum.item()
        if not math.isfinite(loss_value):
            log("Aborting training due to NaN loss.")
            sys.exit(1)
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()

        now = time.perf_counter()
        seconds, last = now - last, now
        log(f"completed step: {step}, seconds: {seconds:.3f}, "
            f"TFLOP/s/device: {flops / 1e12 / seconds:.3f}, "
            f"Tokens/s/device: {tokens_per_device / seconds:.3f}, "
            f"total_weights: {total_weights}, loss: {loss_value:.3f}")

        completed = step + 1
        if cfg.enable_checkpointing and (completed % cfg.checkpoint_period == 0 or completed == cfg.steps):
            if rank == 0:
                payload = {
                    "format": checkpoint.FORMAT,
                    "step": completed,
                    "data_position": batches.position,
                    "model_name": cfg.model_name,
                    "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "config": dict(cfg),
                    "world_size": world,
                }
                metadata = {"data_position": batches.position, "model_name": cfg.model_name,
                            "run_name": cfg.run_name, "world_size": world, "num_parameters": n_params,
                            "saved_at_unix": time.time()}
                saved = checkpoint.save(store, completed, payload, metadata)
                if saved is None:
                    log(f"Checkpoint {completed} already exists in {root}, not overwriting it")
                else:
                    log(f"Finished saving checkpoint to `{root}/{completed}`.")
                    log(f"Saved a checkpoint at step {completed}.")
            progress.latest_checkpoint = completed

    batches.close()
    if world > 1:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
