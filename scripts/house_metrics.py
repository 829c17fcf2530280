#!/usr/bin/env python3
"""House metrics of issue 29, for a before/after comparison: C++ files over 500 lines and
functions over 120 lines in backend/ and engine/ (tests excluded), and the places that write
the attempts table. Usage: scripts/house_metrics.py [repo-root]

A function is found as a line that opens a brace at the end of a signature (not a namespace,
class, struct, enum, or a control statement) and ends where its braces balance again; lambdas
inside it count towards it. That is a heuristic for this code base's formatting (clang-format,
opening brace on the signature line), good enough to count, not to parse C++."""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
sources = sorted(p for d in ("backend", "engine") for p in (root / d).rglob("*")
                 if p.suffix in (".cpp", ".h") and "tests" not in p.parts)

not_function = re.compile(r"^\s*(namespace|class|struct|enum|union|extern|if|for|while|switch|"
                          r"do|else|try|catch|return|case)\b|=\s*\{$|^\s*\{$")
signature_end = re.compile(r"\)\s*(const)?\s*(noexcept)?\s*(override)?\s*(->\s*[\w:<>,\s*&]+)?\s*\{$")


def strip_strings(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split("//")[0]


long_files, long_functions = [], []
for path in sources:
    lines = path.read_text(errors="replace").splitlines()
    rel = path.relative_to(root)
    if len(lines) > 500:
        long_files.append((len(lines), str(rel)))
    depth, start, name, start_depth = 0, None, None, 0
    for number, raw in enumerate(lines, 1):
        line = strip_strings(raw)
        if start is None and signature_end.search(line.rstrip()) and not not_function.search(line) \
                and not raw.startswith((" " * 8)):
            start, start_depth = number, depth
            match = re.search(r"([\w:~]+)\s*\(", line)
            name = match.group(1) if match else line.strip()
        depth += line.count("{") - line.count("}")
        if start is not None and depth <= start_depth:
            length = number - start + 1
            if length > 120:
                long_functions.append((length, f"{rel}:{start} {name}"))
            start = None

writers = []
pattern = re.compile(r"(INSERT\s+INTO|UPDATE)\s+attempts\b", re.I)
for path in sources:
    for number, raw in enumerate(path.read_text(errors="replace").splitlines(), 1):
        if pattern.search(raw):
            writers.append(f"{path.relative_to(root)}:{number}")

print(f"files over 500 lines: {len(long_files)}")
for n, f in sorted(long_files, reverse=True):
    print(f"  {n:5d} {f}")
print(f"functions over 120 lines: {len(long_functions)}")
for n, f in sorted(long_functions, reverse=True):
    print(f"  {n:5d} {f}")
print(f"statements writing attempts (INSERT/UPDATE): {len(writers)} in "
      f"{len({w.split(':')[0] for w in writers})} files")
for w in writers:
    print(f"  {w}")
