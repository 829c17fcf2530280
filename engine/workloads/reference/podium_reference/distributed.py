"""Where this process sits in the gang, read from the environment Podium's worker sets.

PyTorch's MASTER_ADDR / MASTER_PORT / RANK / WORLD_SIZE come first; the JAX multi-controller
variables (JAX_COORDINATOR_ADDRESS "host:port", JAX_PROCESS_ID, JAX_PROCESS_COUNT, and
JAX_COORDINATOR_PORT when the address carries no port) are the fallback, so the same command
works whichever set a launcher provides. Each value falls back independently.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class DistEnv:
    rank: int
    world_size: int
    master_addr: str
    master_port: int

    @property
    def init_method(self):
        host = f"[{self.master_addr}]" if ":" in self.master_addr else self.master_addr
        return f"tcp://{host}:{self.master_port}"


def _int(environ, name):
    raw = environ.get(name, "").strip()
    if not raw:
        return None
    try:
        return int(raw, 10)
    except ValueError:
        raise ValueError(f"Environment variable {name}={raw!r} is not an integer") from None


def _split_host_port(address):
    address = address.strip()
    if address.startswith("["):  # [ipv6]:port
        host, _, rest = address[1:].partition("]")
        return host, rest[1:] if rest.startswith(":") else ""
    if address.count(":") == 1:
        host, _, port = address.partition(":")
        return host, port
    return address, ""


def resolve(environ):
    """DistEnv from an environment mapping; world size 1 needs no address at all."""
    rank = _int(environ, "RANK")
    if rank is None:
        rank = _int(environ, "JAX_PROCESS_ID")
    world = _int(environ, "WORLD_SIZE")
    if world is None:
        world = _int(environ, "JAX_PROCESS_COUNT")
    rank = 0 if rank is None else rank
    world = 1 if world is None else world
    if world < 1 or not 0 <= rank < world:
        raise ValueError(f"Invalid rank {rank} for world size {world}")

    addr = environ.get("MASTER_ADDR", "").strip()
    port = _int(environ, "MASTER_PORT")
    coordinator = environ.get("JAX_COORDINATOR_ADDRESS", "").strip()
    if coordinator:
        c_host, c_port = _split_host_port(coordinator)
        addr = addr or c_host
        if port is None:
            port = int(c_port, 10) if c_port else _int(environ, "JAX_COORDINATOR_PORT")
    if world > 1 and (not addr or port is None):
        raise ValueError(
            f"WORLD_SIZE={world} needs a coordinator: set MASTER_ADDR and MASTER_PORT "
            "(or JAX_COORDINATOR_ADDRESS=host:port)"
        )
    return DistEnv(rank=rank, world_size=world, master_addr=addr or "127.0.0.1", master_port=port or 0)
