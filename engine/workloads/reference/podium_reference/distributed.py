"""Where this process sits in the gang, read from the environment Podium's worker sets.

JAX's multi-controller variables: JAX_COORDINATOR_ADDRESS ("host:port", "[v6]:port", or a
bare host with JAX_COORDINATOR_PORT), JAX_PROCESS_COUNT, JAX_PROCESS_ID; and the slice:
MEGASCALE_NUM_SLICES, MEGASCALE_SLICE_ID (default 1 and 0). Nothing here imports JAX.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class DistEnv:
    process_id: int
    process_count: int
    coordinator_address: str  # host:port, or "" for a single process
    num_slices: int
    slice_id: int


def _int(environ, name):
    raw = environ.get(name, "").strip()
    if not raw:
        return None
    try:
        return int(raw, 10)
    except ValueError:
        raise ValueError(f"Environment variable {name}={raw!r} is not an integer") from None


def _has_port(address):
    if address.startswith("["):  # [ipv6]:port
        return "]:" in address
    return address.count(":") == 1


def resolve(environ):
    """DistEnv from an environment mapping; one process needs no coordinator at all."""
    pid = _int(environ, "JAX_PROCESS_ID")
    count = _int(environ, "JAX_PROCESS_COUNT")
    pid = 0 if pid is None else pid
    count = 1 if count is None else count
    if count < 1 or not 0 <= pid < count:
        raise ValueError(f"Invalid JAX_PROCESS_ID {pid} for JAX_PROCESS_COUNT {count}")
    address = environ.get("JAX_COORDINATOR_ADDRESS", "").strip()
    if address and not _has_port(address):
        port = _int(environ, "JAX_COORDINATOR_PORT")
        if port is None:
            raise ValueError(f"JAX_COORDINATOR_ADDRESS={address} has no port and JAX_COORDINATOR_PORT is not set")
        address = f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
    if count > 1 and not address:
        raise ValueError(f"JAX_PROCESS_COUNT={count} needs JAX_COORDINATOR_ADDRESS=host:port")
    slices = _int(environ, "MEGASCALE_NUM_SLICES") or 1
    slice_id = _int(environ, "MEGASCALE_SLICE_ID") or 0
    if slices < 1 or not 0 <= slice_id < slices:
        raise ValueError(f"Invalid MEGASCALE_SLICE_ID {slice_id} for MEGASCALE_NUM_SLICES {slices}")
    return DistEnv(pid, count, address if count > 1 else "", slices, slice_id)
