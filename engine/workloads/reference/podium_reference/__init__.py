"""Podium's reference workload: a small byte-level GPT trained with torch.distributed (gloo).

It stands in for MaxText on machines without TPUs, speaking MaxText's command line, log
lines and checkpoint layout so that Podium's worker, log parser and recovery logic run
against a real training process. See README.md next to this package.
"""
