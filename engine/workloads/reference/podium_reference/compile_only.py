"""`--compile-only`: the reference workload's counterpart of MaxText's train_compile.

It trains nothing and reads no data: it lowers and compiles the real training step ahead of
time, `jax.jit(train_step).lower(abstract state, abstract batch).compile()`, and prints the
compiler's figures from `compiled.memory_analysis()` in MaxText's words:

    Total memory size: 0.010 GB, Output size: ..., Temp size: ..., Argument size: ..., Host temp size: ...

- Without compile_topology it compiles for this host's own devices (CPU, as many as
  XLA_FLAGS=--xla_force_host_platform_device_count gives), with the run's mesh.
- With compile_topology=<accelerator> (v5e-16, v5p-8, v6e-16, tpu7x-64, ...) and
  compile_topology_num_slices=N it compiles for that TPU slice from this CPU host, as MaxText's
  train_compile does: the devices come from jax.experimental.topologies.get_topology_desc (no
  TPU needed, only libtpu). A step that does not fit the chip's HBM fails in XLA's compiler
  with its RESOURCE_EXHAUSTED error ("Ran out of memory in memory space hbm. Used X of Y hbm"),
  uncaught: traceback and exit code 1.
"""

import os

from podium_reference import catalog
from podium_reference import mesh as mesh_lib
from podium_reference.train import log, print_compiled_memory_stats, use_cpu_unless_told


def topology_devices(cfg):
    """(devices, num_slices) of the TPU slice(s) named by compile_topology."""
    from jax.experimental import topologies

    from podium_reference import topology

    spec = topology.spec(cfg.compile_topology)
    num_slices = cfg.compile_topology_num_slices
    if num_slices == -1:
        num_slices = cfg.num_slices if cfg.num_slices != -1 else 1
    log(f"Compiling for {spec.accelerator} x {num_slices}: topology {spec.topology_name}, chip config "
        f"{spec.chip_config_name}, chips per host {spec.chips_per_host_bounds}, wrap {spec.wrap}")
    topo = topologies.get_topology_desc(platform="tpu", topology_name=spec.topology_name,
                                        chip_config_name=spec.chip_config_name,
                                        chips_per_host_bounds=spec.chips_per_host_bounds,
                                        num_slices=num_slices, wrap=spec.wrap)
    return list(topo.devices), num_slices


def run(cfg):
    for key, value in cfg.items():
        log(f"Config param {key}: {value}")
    use_cpu_unless_told()
    if cfg.compile_topology:
        # libtpu reads the slice's hosts from here when it loads; compiling for a topology
        # description needs none of them, and this host is not one.
        os.environ["TPU_WORKER_HOSTNAMES"] = "localhost"
        os.environ["TPU_WORKER_ID"] = "0"
        # Several compiles may run at once on one host (no TPU is opened): skip libtpu's
        # one-process-per-host lock file.
        os.environ["ALLOW_MULTIPLE_LIBTPU_LOAD"] = "1"
    import jax
    from jax.experimental import mesh_utils
    from jax.sharding import Mesh

    from podium_reference.state import Trainer

    if cfg.compile_topology:
        devices, num_slices = topology_devices(cfg)
        ici, dcn = mesh_lib.shapes(cfg, len(devices), num_slices)
        if num_slices > 1:
            array = mesh_utils.create_hybrid_device_mesh(ici, dcn, devices, allow_split_physical_axes=True)
        else:
            array = mesh_utils.create_device_mesh(tuple(i * d for i, d in zip(ici, dcn)), devices,
                                                  allow_split_physical_axes=True)
    else:
        devices = jax.devices()
        num_slices = cfg.num_slices if cfg.num_slices != -1 else 1
        ici, dcn = mesh_lib.shapes(cfg, len(devices), num_slices)
        array = mesh_lib.device_array(devices, ici, dcn,
                                      lambda d: 0 if num_slices == 1 else d.id * num_slices // len(devices))
    mesh = Mesh(array, mesh_lib.MESH_AXES)
    log(f"Mesh ({len(devices)} {devices[0].platform} devices, {num_slices} slice{'s' if num_slices != 1 else ''}): "
        f"{mesh_lib.describe(mesh)}")

    dims = catalog.get_dims(cfg.model_name)
    trainer = Trainer(dims, cfg.learning_rate, mesh)
    batch_shape = (cfg.gradient_accumulation_steps, cfg.per_device_batch_size * len(devices),
                   cfg.max_target_length + 1)
    log(f"Compiling the training step of {cfg.model_name} for per_device_batch_size="
        f"{cfg.per_device_batch_size}, max_target_length={cfg.max_target_length}, "
        f"gradient_accumulation_steps={cfg.gradient_accumulation_steps} (global batch {batch_shape[1]})")
    compiled = trainer.lower(batch_shape).compile()
    print_compiled_memory_stats(compiled.memory_analysis())
    flops, learnable, attention = catalog.training_flops_per_device(
        dims, cfg.per_device_batch_size, cfg.max_target_length, cfg.gradient_accumulation_steps)
    log(f"Per train step: Total TFLOPs: {flops / 1e12:.2f} split as {100 * learnable / flops:.2f}% "
        f"learnable weight flops and {100 * attention / flops:.2f}% attention flops")
    log("Compiled the training step; nothing trained (--compile-only)")
    return 0
