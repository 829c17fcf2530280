"""Figures of a sample of latencies."""

import math


def percentile(values, p, empty=float("nan")):
    """Nearest-rank percentile: the smallest value with at least p % of the values at or below
    it; `empty` for no values."""
    s = sorted(values)
    if not s:
        return empty
    k = max(0, min(len(s) - 1, math.ceil(p / 100.0 * len(s)) - 1))
    return s[k]


def summary(values, digits=3):
    """{p50, p99, max, n}, rounded; None figures for no values."""
    if not values:
        return {"p50": None, "p99": None, "max": None, "n": 0}
    return {"p50": round(percentile(values, 50), digits),
            "p99": round(percentile(values, 99), digits),
            "max": round(max(values), digits), "n": len(values)}
