"""The device mesh of a run, from MaxText's ici_*/dcn_* parallelism keys.

MaxText's mesh axes, in its order (configs/base.yml `mesh_axes` of current MaxText):

    diloco, data, stage, fsdp, fsdp_transpose, context, context_usp_ulysses,
    context_autoregressive, tensor, tensor_sequence, expert, autoregressive

Each axis has a DCN size (across slices) and an ICI size (within a slice); the mesh axis is
their product, the DCN factor outermost. The `pipeline` keys size the `stage` axis; the older
`sequence` keys have no axis of their own in current MaxText and multiply `context`.

As MaxText's fill_unspecified_mesh_axes, one -1 per kind takes what is left: devices per slice
for ICI, slices for DCN. A layout that does not fit is not refused here: the shape goes to
jax.experimental.mesh_utils.create_device_mesh, which raises JAX's own error (for example
"ValueError: Number of devices 4 must equal the product of mesh_shape (1, 1, 3, ...)"), so a
run fails with the message JAX gives, as MaxText on the same layout would fail inside JAX.
"""

import math

MESH_AXES = ("diloco", "data", "stage", "fsdp", "fsdp_transpose", "context", "context_usp_ulysses",
             "context_autoregressive", "tensor", "tensor_sequence", "expert", "autoregressive")

# Mesh axis -> the parallelism keys whose product sizes it.
_AXIS_KEYS = {
    "diloco": ("diloco",),
    "data": ("data",),
    "stage": ("pipeline",),
    "fsdp": ("fsdp",),
    "fsdp_transpose": ("fsdp_transpose",),
    "context": ("context", "sequence"),
    "context_usp_ulysses": ("context_usp_ulysses",),
    "context_autoregressive": ("context_autoregressive",),
    "tensor": ("tensor",),
    "tensor_sequence": ("tensor_sequence",),
    "expert": ("expert",),
    "autoregressive": ("autoregressive",),
}

# Batch axes of the input, as MaxText's input_data_sharding_logical_axes
# (activation_embed_and_logits_batch -> data, stage, fsdp, fsdp_transpose, expert).
BATCH_AXES = ("data", "stage", "fsdp", "fsdp_transpose", "expert")


def _sizes(cfg, kind):
    """Sizes per mesh axis for kind 'ici' or 'dcn', -1 kept (a -1 in `sequence` is a -1)."""
    out = []
    for axis in MESH_AXES:
        values = [cfg[f"{kind}_{key}_parallelism"] for key in _AXIS_KEYS[axis]]
        out.append(-1 if -1 in values else math.prod(values))
    return out


def fill_unspecified(values, target):
    """Replace the one -1 by target / product of the others, as MaxText does.

    When that is not a whole number the axis gets the largest whole size that fits (at least
    1): the product then differs from `target` and JAX refuses the shape with its own error.
    More than one -1 is an error here, with MaxText's wording.
    """
    values = list(values)
    if values.count(-1) > 1:
        raise ValueError("Found unspecified values (-1) for more than one parallelism axis. "
                         "At most one axis can be unspecified.")
    if -1 in values:
        rest = math.prod(v for v in values if v != -1)
        values[values.index(-1)] = max(1, target // rest)
    return values


def shapes(cfg, num_devices, num_slices):
    """(ici_shape, dcn_shape): per-axis sizes within a slice and across slices."""
    per_slice = num_devices // num_slices if num_devices % num_slices == 0 else num_devices
    ici = fill_unspecified(_sizes(cfg, "ici"), per_slice)
    dcn = fill_unspecified(_sizes(cfg, "dcn"), num_slices)
    return tuple(ici), tuple(dcn)


def device_array(devices, ici_shape, dcn_shape, slice_of):
    """The numpy array of devices for Mesh(…, MESH_AXES).

    One slice: create_device_mesh(ici x dcn). Several: each slice's devices (grouped by
    slice_of(device), in process then id order) laid out with create_device_mesh(ici_shape),
    then the slices placed along the DCN shape, each mesh axis = DCN factor x ICI factor, as
    jax's create_hybrid_device_mesh does for TPU slices. CPU devices carry no slice_index, so
    the grouping is given by the caller.
    """
    import numpy as np
    from jax.experimental import mesh_utils

    full = tuple(i * d for i, d in zip(ici_shape, dcn_shape))
    num_slices = math.prod(dcn_shape)
    groups = {}
    for d in devices:
        groups.setdefault(slice_of(d), []).append(d)
    if len(groups) == 1 or math.prod(full) != len(devices) or num_slices != len(groups):
        # One slice, or a shape that cannot hold these devices: JAX decides (and explains).
        return mesh_utils.create_device_mesh(full, devices, contiguous_submeshes=False,
                                             allow_split_physical_axes=True)
    per_slice = [
        mesh_utils.create_device_mesh(ici_shape, sorted(groups[s], key=lambda d: (d.process_index, d.id)),
                                      allow_split_physical_axes=True)
        for s in sorted(groups)
    ]
    granules = np.empty(len(per_slice), dtype=object)
    for i, m in enumerate(per_slice):
        granules[i] = m
    granules = granules.reshape(dcn_shape)
    return np.block(granules.tolist())


def describe(mesh):
    return ", ".join(f"{name}: {size}" for name, size in mesh.shape.items())
