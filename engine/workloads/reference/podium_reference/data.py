"""Byte-level input pipeline: the dataset file's bytes are the tokens.

Each step consumes one global batch of world_size x per_device_batch_size x
gradient_accumulation_steps sequences of max_target_length + 1 bytes (inputs plus the
next-byte targets), taken sequentially from `position`, without overlap and without wrapping
around: like MaxText with a single epoch, running out of data raises StopIteration from the
iterator, after the steps that could be fed. Within a step, micro-batch m of rank r is the
contiguous block of per_device_batch_size sequences at index (m * world_size + r), so ranks
read disjoint slices and the set of sequences in a step does not depend on how it is split.

The position is part of the checkpoint, so a resumed run reads exactly what an uninterrupted
run would have read.
"""

import mmap
import os

import torch


def bytes_per_step(world_size, per_device_batch_size, max_target_length, gradient_accumulation_steps):
    return world_size * per_device_batch_size * gradient_accumulation_steps * (max_target_length + 1)


class ByteBatchIterator:
    def __init__(self, path, rank, world_size, per_device_batch_size, max_target_length,
                 gradient_accumulation_steps, position=0, first_step=0):
        self.path = path
        self.rank = rank
        self.world_size = world_size
        self.batch = per_device_batch_size
        self.seq = max_target_length + 1
        self.micro_batches = gradient_accumulation_steps
        self.position = position
        self.step = first_step
        with open(path, "rb") as f:
            self.size = os.fstat(f.fileno()).st_size
            # mmap keeps memory flat for large datasets; an empty file cannot be mapped.
            self._data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if self.size else b""

    def __iter__(self):
        return self

    def __next__(self):
        """List of gradient_accumulation_steps tensors of shape (batch, seq), dtype int64."""
        need = bytes_per_step(self.world_size, self.batch, self.seq - 1, self.micro_batches)
        end = self.position + need
        if end > self.size:
            raise StopIteration(
                f"dataset {self.path} exhausted: step {self.step} needs bytes [{self.position}, {end}) "
                f"but the file has {self.size} bytes"
            )
        block = self.batch * self.seq
        micro = []
        for m in range(self.micro_batches):
            start = self.position + (m * self.world_size + self.rank) * block
            chunk = bytearray(self._data[start:start + block])
            micro.append(torch.frombuffer(chunk, dtype=torch.uint8).to(torch.int64).view(self.batch, self.seq))
        self.position = end
        self.step += 1
        return micro

    def close(self):
        if isinstance(self._data, mmap.mmap):
            self._data.close()
