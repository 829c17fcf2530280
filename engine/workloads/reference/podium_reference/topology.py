"""TPU accelerator names (v5e-16, v5p-8, v6e-16, tpu7x-64, ...) -> get_topology_desc arguments.

The rules reproduce MaxText's accelerator_to_spec_map for the power-of-two slices (facts taken
from MaxText's table, src/maxtext/utils/accelerator_to_spec_map.py, Apache-2.0):

- v5e, v6e (also v5litepod): one device per chip, a 2-D torus of N chips: 1x1, 2x2, 2x4, 4x4,
  4x8, 8x8, 8x16, 16x16; an axis of 16 chips wraps around.
- v4, v5p: the name counts TensorCores, two per chip, fused into one megacore device:
  N/2 chips in 3-D: 2x2x1, 2x2x2, 2x2x4, 2x4x4, 4x4x4, 4x4x8, ...; chip_config "megacore"
  ("megacore_dense" for v4); wrapped in every axis once all three are >= 4.
- tpu7x: the name counts TensorCores, two devices per chip (chip_config "default"), N/2 chips
  laid out as v5p.
Topology names are MaxText's: "v5e:4x4", "v6e:4x4", "v4:2x2x1", "v5:2x2x1" (v5p), "tpu7x:2x4x4".
chips_per_host_bounds is (2, 2, 1), or (1, 1, 1) for a single chip.
"""

import re
from dataclasses import dataclass

# family -> (topology prefix, dimensions, TensorCores per chip in the name, chip_config, wrap at)
_FAMILIES = {
    "v5e": ("v5e", 2, 1, "default", 16),
    "v5litepod": ("v5e", 2, 1, "default", 16),
    "v6e": ("v6e", 2, 1, "default", 16),
    "v4": ("v4", 3, 2, "megacore_dense", 4),
    "v5p": ("v5", 3, 2, "megacore", 4),
    "tpu7x": ("tpu7x", 3, 2, "default", 4),
}


@dataclass(frozen=True)
class TopologySpec:
    accelerator: str
    topology_name: str
    chip_config_name: str
    chips_per_host_bounds: tuple
    wrap: tuple


def _grid(chips, dims):
    """Chip grid as MaxText lays out power-of-two slices: from 2x2(x1), double the last of
    the smallest axes each time the chip count doubles (2x2x1, 2x2x2, 2x2x4, 2x4x4, 4x4x4...)."""
    if chips == 1:
        return (1,) * dims
    if chips < 4 or chips & (chips - 1):
        return None
    shape = [2, 2] + [1] * (dims - 2)
    while (n := _prod(shape)) < chips:
        smallest = min(shape)
        last = max(i for i, v in enumerate(shape) if v == smallest)
        shape[last] *= 2
    return tuple(shape) if n == chips else None


def _prod(values):
    out = 1
    for v in values:
        out *= v
    return out


def spec(accelerator):
    match = re.fullmatch(r"([a-z0-9]+)-([0-9]+)", accelerator.strip().lower())
    family = match and _FAMILIES.get(match.group(1))
    if not family:
        raise ValueError(f"compile_topology {accelerator!r} is not a known TPU accelerator type "
                         f"(families: {', '.join(sorted(_FAMILIES))}, e.g. v5e-16, v5p-8, v6e-16, tpu7x-64)")
    prefix, dims, cores_per_chip, chip_config, wrap_at = family
    count = int(match.group(2))
    chips = count // cores_per_chip if count % cores_per_chip == 0 else None
    grid = _grid(chips, dims) if chips else None
    if grid is None:
        raise ValueError(f"compile_topology {accelerator!r}: no power-of-two slice of that size")
    if dims == 2:
        wrap = tuple(g >= wrap_at for g in grid) + (False,)
    else:
        wrap = (all(g >= wrap_at for g in grid),) * 3
    bounds = (1, 1, 1) if chips == 1 else (2, 2, 1)
    return TopologySpec(accelerator, f"{prefix}:{'x'.join(map(str, grid))}", chip_config, bounds, wrap)
