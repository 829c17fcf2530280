"""`--compile-only`: the reference workload's counterpart of MaxText's ahead-of-time compile
(`python3 -m MaxText.train_compile`). It trains nothing and reads no data: it prints the
per-device memory one training step needs, in the line MaxText prints after compiling

    Total memory size: 1.234 GB, Output size: ..., Temp size: ..., Argument size: ..., Host temp size: 0.000 GB

so that Podium's compile-check preflight runs for real on a CPU host.

The count is exact for this model, not an estimate:
  - arguments (live across the step): parameters, their gradients and AdamW's two moments,
    4 bytes each (fp32), and the step's input batch (int64);
  - temporaries: the activations autograd saves for the backward pass, measured with
    torch.autograd.graph.saved_tensors_hooks (each storage once, parameters excluded).
Activations are linear in the batch and a polynomial of degree 2 in the sequence length
(attention scores are s x s), so they are measured at batch 1 and three short lengths and the
polynomial is evaluated at the configured length: exact, and cheap even when the configured
shape would need more memory than this host has.
"""

import torch

from podium_reference import catalog
from podium_reference.model import GPT


def _saved_activation_bytes(model, seq_len, param_storages):
    seen = {}

    def pack(t):
        try:
            storage = t.storage()
            key = storage.data_ptr()
            if key not in param_storages and key not in seen:
                seen[key] = storage.nbytes()
        except (RuntimeError, NotImplementedError):
            seen[id(t)] = t.numel() * t.element_size()
        return t

    tokens = torch.zeros((1, seq_len + 1), dtype=torch.long)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = model.loss(tokens)
    del loss
    return sum(seen.values())


def memory_bytes(model_name, per_device_batch_size, max_target_length):
    """{argument, temp, output, total} bytes per device of one training step."""
    dims = catalog.get_dims(model_name)
    torch.manual_seed(0)
    model = GPT(dims)
    params = list(model.parameters())
    param_bytes = sum(p.numel() * p.element_size() for p in params)
    param_storages = {p.storage().data_ptr() for p in params}
    # Parameters, gradients, AdamW exp_avg and exp_avg_sq: four copies.
    argument = 4 * param_bytes + per_device_batch_size * (max_target_length + 1) * 8
    lengths = (8, 16, 32)
    measured = [_saved_activation_bytes(model, s, param_storages) for s in lengths]
    # The quadratic through the three points, evaluated at the configured length (Lagrange).
    s = float(max_target_length)
    per_sample = 0.0
    for i, si in enumerate(lengths):
        term = float(measured[i])
        for j, sj in enumerate(lengths):
            if i != j:
                term *= (s - sj) / (si - sj)
        per_sample += term
    temp = int(round(per_sample)) * per_device_batch_size
    output = 4  # the loss
    return {"argument": argument, "temp": temp, "output": output,
            "total": argument + temp + output}


def format_line(b):
    # MaxText's bytes_to_gb divides by 2**30 and labels the result "GB"; so does this line, so
    # that Podium reads both alike.
    gb = lambda n: f"{n / 2**30:.3f} GB"  # noqa: E731
    return (f"Total memory size: {gb(b['total'])}, Output size: {gb(b['output'])}, "
            f"Temp size: {gb(b['temp'])}, Argument size: {gb(b['argument'])}, "
            f"Host temp size: {gb(0)}")
