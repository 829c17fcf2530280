"""Scenarios of bench/limits.py (issue 11: benchmarks against the limits of the machine)."""
