"""Byte-level input pipeline: the dataset file's bytes are the tokens.

Each step consumes one global batch: gradient_accumulation_steps micro-batches of
global_batch = per_device_batch_size x (global devices) sequences of max_target_length + 1
bytes (inputs plus the next-byte targets), read sequentially from `position`, without
overlap and without wrapping around. Sequence r of micro-batch m is the block at index
m * global_batch + r. Running out of data raises StopIteration from the iterator after the
steps that could be fed, like MaxText with a single epoch.

Each process reads only the rows its own devices hold (`rows`, from the batch sharding), and
the trainer assembles the global array with jax.make_array_from_process_local_data. Which
sequences make up a step does not depend on how many processes or devices share it. The
position is part of the checkpoint, so a resumed run reads what an uninterrupted run would.
"""

import mmap
import os

import numpy as np


def bytes_per_step(global_batch, max_target_length, gradient_accumulation_steps):
    return global_batch * gradient_accumulation_steps * (max_target_length + 1)


class ByteBatchIterator:
    def __init__(self, path, global_batch, max_target_length, gradient_accumulation_steps,
                 rows=None, position=0, first_step=0):
        """rows: (start, stop) of the global batch this process reads (default: all of it)."""
        self.path = path
        self.global_batch = global_batch
        self.seq = max_target_length + 1
        self.micro_batches = gradient_accumulation_steps
        self.rows = rows or (0, global_batch)
        self.position = position
        self.step = first_step
        with open(path, "rb") as f:
            self.size = os.fstat(f.fileno()).st_size
            # mmap keeps memory flat for large datasets; an empty file cannot be mapped.
            self._data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if self.size else b""

    def __iter__(self):
        return self

    def __next__(self):
        """int32 array (micro_batches, rows[1] - rows[0], max_target_length + 1)."""
        need = bytes_per_step(self.global_batch, self.seq - 1, self.micro_batches)
        end = self.position + need
        if end > self.size:
            raise StopIteration(
                f"dataset {self.path} exhausted: step {self.step} needs bytes [{self.position}, {end}) "
                f"but the file has {self.size} bytes"
            )
        start_row, stop_row = self.rows
        out = np.empty((self.micro_batches, stop_row - start_row, self.seq), dtype=np.int32)
        for m in range(self.micro_batches):
            start = self.position + (m * self.global_batch + start_row) * self.seq
            chunk = self._data[start:start + (stop_row - start_row) * self.seq]
            out[m] = np.frombuffer(chunk, dtype=np.uint8).reshape(stop_row - start_row, self.seq)
        self.position = end
        self.step += 1
        return out

    def close(self):
        if isinstance(self._data, mmap.mmap):
            self._data.close()


def process_rows(sharding, global_shape):
    """(start, stop) of dimension 1 of the global batch held by this process's devices.

    The rows of a process's devices are contiguous for the meshes built here (processes are
    outermost in every device order used); anything else is reported rather than mis-fed.
    """
    index_map = sharding.addressable_devices_indices_map(global_shape)
    covered = set()
    for index in index_map.values():
        rows = index[1]
        start = rows.start or 0
        stop = global_shape[1] if rows.stop is None else rows.stop
        covered.update(range(start, stop))
    lo, hi = min(covered), max(covered) + 1
    if len(covered) != hi - lo:
        raise ValueError(f"this process's devices hold non-contiguous batch rows {sorted(covered)}")
    return lo, hi
