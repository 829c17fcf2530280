"""Configuration: a base YAML file followed by key=value overrides, as MaxText's pyconfig.

The schema below is the single source of truth for valid keys, their types and defaults;
base.yml mirrors it (a unit test keeps them equal). Like MaxText, an override is typed after
the schema (int, float, bool, str) and an unknown key is a hard error, because a misspelt key
that is silently ignored produces a run that trains the wrong thing.

Nothing here imports JAX, so a bad command line fails in a fraction of a second.
"""

import os
import sys
from collections import OrderedDict

import yaml

from podium_reference import catalog

# The parallelism keys of current MaxText (configs/base.yml), in its order. "pipeline" is
# the mesh axis "stage"; "sequence" is MaxText's older name for context parallelism and is
# folded into "context" (see mesh.py).
PARALLELISM_KEYS = ("diloco", "data", "fsdp", "fsdp_transpose", "sequence", "context",
                    "context_usp_ulysses", "context_autoregressive", "tensor", "tensor_sequence",
                    "pipeline", "expert", "autoregressive")

# key -> (type, default). Order is the order of the "Config param" log lines.
SCHEMA = OrderedDict(
    [
        ("run_name", (str, "")),
        ("base_output_directory", (str, "reference_output")),
        ("dataset_path", (str, "")),
        ("model_name", (str, "reference-tiny")),
        ("steps", (int, 40)),
        ("per_device_batch_size", (int, 2)),
        ("max_target_length", (int, 64)),
        ("gradient_accumulation_steps", (int, 1)),
        ("learning_rate", (float, 0.003)),
        ("seed", (int, 0)),
        ("enable_checkpointing", (bool, True)),
        ("checkpoint_period", (int, 10)),
        ("distributed_timeout_seconds", (int, 60)),
        # Slices of the run (MaxText's num_slices); -1: $MEGASCALE_NUM_SLICES, else 1.
        ("num_slices", (int, -1)),
    ]
    # MaxText's parallelism keys with MaxText's defaults: one DCN and one ICI size per axis,
    # -1 = "whatever is left" (at most one per kind).
    + [(f"dcn_{name}_parallelism", (int, -1 if name == "data" else 1)) for name in PARALLELISM_KEYS]
    + [(f"ici_{name}_parallelism", (int, -1 if name == "fsdp" else 1)) for name in PARALLELISM_KEYS]
    + [
        # --compile-only: the accelerator to compile for ("" = this host's devices), as
        # MaxText's train_compile (v5p-8, v6e-16, tpu7x-64, ...), and its number of slices.
        ("compile_topology", (str, "")),
        ("compile_topology_num_slices", (int, -1)),
    ]
)

DEFAULT_CONFIG_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "base.yml")


class Config(dict):
    """A validated configuration; keys are also readable as attributes."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def _string_to_bool(s):
    # MaxText accepts exactly true/false (any case) for booleans on the command line.
    if s.lower() == "true":
        return True
    if s.lower() == "false":
        return False
    raise ValueError(f"Can't convert {s} to bool")


def _coerce(key, value):
    expected, _ = SCHEMA[key]
    if isinstance(value, expected) and not (expected is int and isinstance(value, bool)):
        return value
    try:
        if isinstance(value, str):
            if expected is bool:
                return _string_to_bool(value)
            if expected is int:
                return int(value, 10)
            return expected(value)
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if expected is str and value is None:
            return ""
    except ValueError as e:
        raise ValueError(f"Couldn't parse value from CLI or ENV '{value}' for key '{key}'") from e
    raise ValueError(f"Couldn't parse value from CLI or ENV '{value}' for key '{key}' (expected {expected.__name__})")


def _reject_unknown(key):
    # MaxText logs this warning, then raises; Podium classifies "not in valid fields" as a
    # deterministic config failure that must not be retried.
    print(f"Ignoring invalid/unsupported field from YAML/CLI: {key!r}", file=sys.stderr, flush=True)
    raise ValueError(f"{key!r} not in valid fields: {', '.join(map(repr, SCHEMA))}.")


def load_yaml(path):
    with open(path, "r", encoding="utf-8") as f:
        data = yaml.safe_load(f)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"Config file {path} must hold a mapping of keys to values")
    return data


def parse_overrides(args):
    """key=value arguments -> ordered dict; a later repetition of a key wins, as in OmegaConf."""
    overrides = OrderedDict()
    for arg in args:
        key, sep, value = arg.partition("=")
        if not sep or not key:
            raise ValueError(f"Expected key=value on the command line, got {arg!r}")
        overrides[key] = value
    return overrides


def load(args, require_dataset=True):
    """Build the configuration from argv[1:]: [<config.yml>] key=value ...

    The YAML file is optional (MaxText's newer entry points also infer base.yml); without it
    the bundled base.yml is used.
    """
    args = list(args)
    if args and "=" not in args[0]:
        config_path, overrides = args[0], args[1:]
    else:
        config_path, overrides = DEFAULT_CONFIG_PATH, args
    raw = load_yaml(config_path)
    cfg = Config((k, default) for k, (_, default) in SCHEMA.items())
    for key, value in raw.items():
        if key not in SCHEMA:
            _reject_unknown(key)
        cfg[key] = _coerce(key, value)
    for key, value in parse_overrides(overrides).items():
        if key not in SCHEMA:
            _reject_unknown(key)
        cfg[key] = _coerce(key, value)
    validate(cfg, require_dataset)
    return cfg


def validate(cfg, require_dataset=True):
    catalog.get_dims(cfg.model_name)
    for key in ("per_device_batch_size", "max_target_length", "gradient_accumulation_steps",
                "distributed_timeout_seconds"):
        if cfg[key] < 1:
            raise ValueError(f"{key} must be a positive integer, got {cfg[key]}")
    if cfg.steps < 0:
        raise ValueError(f"steps must be >= 0, got {cfg.steps}")
    if cfg.enable_checkpointing and cfg.checkpoint_period < 1:
        raise ValueError(f"checkpoint_period must be >= 1 when enable_checkpointing is true, got {cfg.checkpoint_period}")
    if not cfg.learning_rate > 0:
        raise ValueError(f"learning_rate must be > 0, got {cfg.learning_rate}")
    if require_dataset and not cfg.dataset_path:
        raise ValueError("dataset_path must name the dataset file (its bytes are the training tokens)")
    if cfg.num_slices == 0 or cfg.num_slices < -1:
        raise ValueError(f"num_slices must be -1 (from the environment) or >= 1, got {cfg.num_slices}")
    if cfg.compile_topology_num_slices == 0 or cfg.compile_topology_num_slices < -1:
        raise ValueError(f"compile_topology_num_slices must be -1 or >= 1, got {cfg.compile_topology_num_slices}")
    for key in SCHEMA:
        if key.endswith("_parallelism") and (cfg[key] == 0 or cfg[key] < -1):
            raise ValueError(f"{key} must be -1 or >= 1, got {cfg[key]}")
    if not cfg.base_output_directory:
        raise ValueError("base_output_directory must not be empty")
    if "/" in cfg.run_name or cfg.run_name in (".", ".."):
        raise ValueError(f"run_name must be a single directory name, got {cfg.run_name!r}")
