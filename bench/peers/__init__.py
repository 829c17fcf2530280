"""The peers (MLflow, Aim) beside Podium in bench/limits.py: issue 31's side-by-side scenarios."""
