"""Podium's reference workload: a small byte-level decoder trained with JAX, flax, optax and
Orbax on CPU devices (jax.distributed across processes, gloo collectives).

It stands in for MaxText on machines without TPUs, speaking MaxText's command line, log
lines, mesh keys and checkpoint layout so that Podium's worker, log parser and recovery logic
run against a real JAX training process. See README.md next to this package.
"""
