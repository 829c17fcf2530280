#!/usr/bin/env python3
"""Writes the Kubernetes object schemas the deploy/kubernetes/ check needs (README.md here).

Usage: vendor.py WHEEL  (kubernetes_validate-1.37.0-py3-none-any.whl, from PyPI:
`pip download --no-deps kubernetes-validate==1.37.0`). Standard library only.

For each kind below it reads the strict JSON schema of Kubernetes v1.34.0 that the wheel ships
(kubernetes-json-schema/v1.34.0-local-strict/<kind>.json, `$ref`s into _definitions.json) and
writes <kind>.json here: every `$ref` resolved in place, descriptions dropped, and the JSON
Schema spellings turned into those of a structural OpenAPI schema, which
tests/engine/core/structural_schema.h reads: `type: [T, "null"]` becomes `type: T` with
`nullable: true`, IntOrString (`oneOf` string | integer) becomes
`x-kubernetes-int-or-string: true`. Nothing else changes: `additionalProperties: false` (strict),
`required`, `enum`, `format` and the list types stay as the wheel has them.
"""
import json
import sys
import zipfile
from pathlib import Path

VERSION = "v1.34.0-local-strict"
KINDS = [
    "deployment-apps-v1",
    "service-v1",
    "poddisruptionbudget-policy-v1",
    "configmap-v1",
    "secret-v1",
    "serviceaccount-v1",
    "role-rbac-v1",
    "rolebinding-rbac-v1",
]
DROP = {"description", "$schema", "$id", "x-kubernetes-group-version-kind"}


def convert(node, defs, depth=0):
    if depth > 64:
        raise SystemExit("schema nests deeper than 64: a recursive $ref?")
    if isinstance(node, list):
        return [convert(n, defs, depth + 1) for n in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        merged = dict(defs[name])
        merged.update({k: v for k, v in node.items() if k != "$ref"})
        return convert(merged, defs, depth + 1)
    alternatives = node.get("oneOf")
    if isinstance(alternatives, list) and sorted(
        str(a.get("type")) for a in alternatives
    ) == sorted(["['string', 'null']", "['integer', 'null']"]):
        return {"x-kubernetes-int-or-string": True, "nullable": True}
    out = {}
    for key, value in node.items():
        if key in DROP:
            continue
        if key == "type" and isinstance(value, list):
            types = [t for t in value if t != "null"]
            if len(types) == 1:
                out["type"] = types[0]
                if "null" in value:
                    out["nullable"] = True
                continue
        if key == "properties":
            out[key] = {k: convert(v, defs, depth + 1) for k, v in value.items()}
        else:
            out[key] = convert(value, defs, depth + 1)
    return out


def main():
    wheel = zipfile.ZipFile(sys.argv[1])
    base = f"kubernetes_validate/kubernetes-json-schema/{VERSION}/"
    defs = json.loads(wheel.read(base + "_definitions.json"))["$defs"]
    here = Path(__file__).resolve().parent
    for kind in KINDS:
        schema = convert(json.loads(wheel.read(base + kind + ".json")), defs)
        (here / (kind + ".json")).write_text(json.dumps(schema, sort_keys=True, indent=1) + "\n")
    (here / "LICENSE").write_bytes(wheel.read("kubernetes_validate-1.37.0.dist-info/licenses/LICENSE"))


if __name__ == "__main__":
    main()
