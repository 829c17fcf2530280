"""Make the installed maxtext 0.2.0 importable on Python 3.11.

maxtext 0.2.0 declares Requires-Python >= 3.12. On Python 3.11 exactly one module on the
pre-training path fails to parse: maxtext/configs/pyconfig.py line 123 nests double quotes inside
a double-quoted f-string (PEP 701, Python 3.12). This script rewrites that one expression to
single quotes in the installed file, then compiles every module of the `maxtext` and `MaxText`
packages and lists those that still do not parse (0.2.0: only
maxtext/examples/sft_train_and_evaluate.py, which pre-training never imports).

Idempotent; refuses any maxtext version other than 0.2.0 (a different file needs a fresh look).
Usage: <venv>/bin/python engine/workloads/maxtext/patch_py311.py
Exit status: 0 when pyconfig.py parses afterwards, 1 otherwise.
"""

import importlib.metadata
import pathlib
import sys

EXPECTED_VERSION = "0.2.0"
PYCONFIG = "maxtext/configs/pyconfig.py"
# The exact PEP 701 expression in 0.2.0 and its Python 3.11 spelling (same string at runtime).
OLD = """raise ValueError(f"{key!r} not in {", ".join(map(repr, valid_fields))}.")"""
NEW = """raise ValueError(f"{key!r} not in {', '.join(map(repr, valid_fields))}.")"""


def parses(path: pathlib.Path) -> str | None:
  """None when the file compiles under this interpreter, else 'line N: message'."""
  try:
    compile(path.read_text(encoding="utf-8"), str(path), "exec")
    return None
  except SyntaxError as error:
    return f"line {error.lineno}: {error.msg}"


def main() -> int:
  dist = importlib.metadata.distribution("maxtext")
  if dist.version != EXPECTED_VERSION:
    print(f"maxtext {dist.version} installed; this patch is for {EXPECTED_VERSION} only", file=sys.stderr)
    return 1
  pyconfig = pathlib.Path(dist.locate_file(PYCONFIG))
  text = pyconfig.read_text(encoding="utf-8")
  if OLD in text:
    pyconfig.write_text(text.replace(OLD, NEW), encoding="utf-8")
    print(f"patched {pyconfig}")
  elif NEW in text:
    print(f"already patched: {pyconfig}")
  else:
    print(f"expected expression not found in {pyconfig}", file=sys.stderr)
    return 1

  site = pathlib.Path(dist.locate_file(""))
  remaining = []
  for package in ("maxtext", "MaxText"):
    for module in sorted((site / package).rglob("*.py")):
      problem = parses(module)
      if problem:
        remaining.append(f"{module.relative_to(site)} {problem}")
  print(f"modules that still need Python >= 3.12: {len(remaining)}")
  for line in remaining:
    print(f"  {line}")
  return 0 if parses(pyconfig) is None else 1


if __name__ == "__main__":
  sys.exit(main())
