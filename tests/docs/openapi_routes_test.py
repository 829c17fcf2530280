#!/usr/bin/python3
"""Keeps docs/openapi.yaml true to the router.

Usage: openapi_routes_test.py PODIUM_ROOT

Extracts every route registration `<router>.add("METHOD", "/path", http::Access::<rule>, ...)`
from backend/**/*.cpp and checks, against docs/openapi.yaml:

  * the YAML parses, is OpenAPI 3.1, and every operation has an operationId (unique) and a
    non-empty `responses` map with status codes (or "default");
  * every registered route is documented under the same path and method (path parameters are
    compared by position; their names must match too) and is not marked
    `x-podium-status: planned` (remove the marker once the route exists);
  * every documented operation that is not marked planned is registered;
  * x-podium-access of each registered operation equals the route's http::Access rule, and the
    operation's `security` agrees with it (open: none; agent: bearer only);
  * every `{param}` of a documented path is declared as a path parameter, and every $ref
    resolves inside the document;
  * response schemas are exact: every object schema a response can reach that lists
    `properties` says what else may appear (`additionalProperties: false`, or a schema for map
    values), and none allows anything (`additionalProperties: true`). Bodies the tests receive
    are checked against these schemas (tests/integration/support/openapi_contract.h), so an
    open schema would let a field the server sends, or stops sending, pass unnoticed.

Exits 0 when everything agrees, 1 with one line per disagreement otherwise.
"""

import pathlib
import re
import sys

import yaml

METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
ACCESS_RULES = ("open", "reader", "writer", "admin", "agent")

# <anything>.add("METHOD", "/path", http::Access::rule  (the call may span lines)
ROUTE_RE = re.compile(
    r"""\b\w+\s*(?:\.|->)\s*add\(\s*"([A-Z]+)"\s*,\s*"(/[^"]*)"\s*,\s*(?:[\w:]*::)?Access::(\w+)""",
    re.S,
)


def strip_line_comments(text):
    """Drops lines that are // comments, so documentation examples are not taken as routes."""
    return "\n".join("" if line.lstrip().startswith("//") else line for line in text.splitlines())


# Any call on something named like a router: used to notice registrations ROUTE_RE cannot read
# (a method or path held in a variable), which would otherwise escape the comparison.
ANY_ADD_RE = re.compile(r"""\b\w*router\w*\s*(?:\.|->)\s*add\(""", re.I)


def router_routes(root, problems):
    routes = {}
    for cpp in sorted((root / "backend").rglob("*.cpp")):
        if cpp.name.endswith("_test.cpp"):
            continue
        text = strip_line_comments(cpp.read_text(encoding="utf-8", errors="replace"))
        found = ROUTE_RE.findall(text)
        calls = len(ANY_ADD_RE.findall(text))
        if calls > len(found):
            problems.append(f"{cpp.relative_to(root)}: {calls - len(found)} router add() call(s) the test "
                            "cannot read; register routes as router.add(\"METHOD\", \"/path\", "
                            "http::Access::rule, ...) with literals")
        for method, path, access in found:
            key = (method.lower(), path)
            where = f"{cpp.relative_to(root)}"
            if key in routes:
                routes[key]["files"].append(where)
            else:
                routes[key] = {"access": access, "files": [where]}
    return routes


def shape(path):
    """'/api/v1/runs/{id}/logs' -> ('/api/v1/runs/{}/logs', ['id'])"""
    names = re.findall(r"\{([^}]*)\}", path)
    return re.sub(r"\{[^}]*\}", "{}", path), names


def resolve_ref(doc, ref):
    if not ref.startswith("#/"):
        return None
    node = doc
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def all_refs(node, out):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                out.append(v)
            else:
                all_refs(v, out)
    elif isinstance(node, list):
        for v in node:
            all_refs(v, out)


def open_response_schemas(doc, paths):
    """Object schemas reachable from a response that let unnamed members through unchecked."""
    problems = []
    seen = set()

    def visit(node, where):
        if isinstance(node, list):
            for i, v in enumerate(node):
                visit(v, f"{where}/{i}")
            return
        if not isinstance(node, dict):
            return
        if "$ref" in node and isinstance(node["$ref"], str):
            if node["$ref"] not in seen:
                seen.add(node["$ref"])
                visit(resolve_ref(doc, node["$ref"]), node["$ref"])
            return
        extra = node.get("additionalProperties", None)
        if extra is True:
            problems.append(f"{where}: 'additionalProperties: true' in a response schema")
        elif "properties" in node and extra is None:
            problems.append(f"{where}: lists properties but not additionalProperties (false, or "
                            "a schema for map values)")
        for key in ("properties",):
            for name, sub in (node.get(key) or {}).items():
                visit(sub, f"{where}/properties/{name}")
        for key in ("items", "additionalProperties", "not"):
            if isinstance(node.get(key), dict):
                visit(node[key], f"{where}/{key}")
        for key in ("allOf", "anyOf", "oneOf"):
            if isinstance(node.get(key), list):
                visit(node[key], f"{where}/{key}")

    for path, item in paths.items():
        for method in METHODS:
            op = item.get(method) if isinstance(item, dict) else None
            if not isinstance(op, dict):
                continue
            for code, response in (op.get("responses") or {}).items():
                if isinstance(response, dict) and "$ref" in response:
                    response = resolve_ref(doc, response["$ref"]) or {}
                for media, m in ((response or {}).get("content") or {}).items():
                    if isinstance(m, dict) and "schema" in m:
                        visit(m["schema"], f"{method.upper()} {path} {code} {media}")
    return problems


def declared_path_params(doc, path_item, op):
    names = set()
    for params in (path_item.get("parameters") or [], op.get("parameters") or []):
        for p in params:
            if isinstance(p, dict) and "$ref" in p:
                p = resolve_ref(doc, p["$ref"]) or {}
            if isinstance(p, dict) and p.get("in") == "path":
                names.add(p.get("name"))
    return names


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    root = pathlib.Path(argv[1]).resolve()
    spec_file = root / "docs" / "openapi.yaml"
    problems = []

    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        doc = yaml.load(spec_file.read_text(encoding="utf-8"), Loader=loader)
    except (OSError, yaml.YAMLError) as e:
        print(f"FAIL: cannot read {spec_file}: {e}")
        return 1
    if not isinstance(doc, dict) or not str(doc.get("openapi", "")).startswith("3.1"):
        problems.append("docs/openapi.yaml: 'openapi' must be 3.1.x")
    paths = doc.get("paths") if isinstance(doc, dict) else None
    if not isinstance(paths, dict) or not paths:
        print("FAIL: docs/openapi.yaml has no paths")
        return 1

    routes = router_routes(root, problems)
    if not routes:
        problems.append("no router.add(...) registrations found under backend/: the extraction regex is stale")

    # Documented operations keyed by path shape.
    documented = {}  # (method, shape) -> (path, op)
    operation_ids = {}
    for path, item in paths.items():
        if not isinstance(item, dict):
            problems.append(f"{path}: path item is not a mapping")
            continue
        pshape, pnames = shape(path)
        for method in METHODS:
            op = item.get(method)
            if op is None:
                continue
            label = f"{method.upper()} {path}"
            if not isinstance(op, dict):
                problems.append(f"{label}: operation is not a mapping")
                continue
            oid = op.get("operationId")
            if not oid:
                problems.append(f"{label}: missing operationId")
            elif oid in operation_ids:
                problems.append(f"{label}: operationId '{oid}' also used by {operation_ids[oid]}")
            else:
                operation_ids[oid] = label
            responses = op.get("responses")
            if not isinstance(responses, dict) or not responses:
                problems.append(f"{label}: missing responses")
            else:
                for code in responses:
                    if str(code) != "default" and not re.fullmatch(r"[1-5](\d\d|XX)", str(code)):
                        problems.append(f"{label}: response key '{code}' is not a status code")
            access = op.get("x-podium-access")
            if access not in ACCESS_RULES:
                problems.append(f"{label}: x-podium-access must be one of {', '.join(ACCESS_RULES)}")
            status = op.get("x-podium-status")
            if status not in (None, "planned"):
                problems.append(f"{label}: x-podium-status may only be 'planned'")
            missing = set(pnames) - declared_path_params(doc, item, op)
            if missing:
                problems.append(f"{label}: path parameter(s) {', '.join(sorted(missing))} not declared")
            documented[(method, pshape)] = (path, op)

    # Router -> docs.
    for (method, path), info in sorted(routes.items()):
        label = f"{method.upper()} {path}"
        if len(info["files"]) > 1:
            problems.append(f"{label}: registered more than once ({', '.join(info['files'])})")
        pshape, pnames = shape(path)
        found = documented.get((method, pshape))
        if not found:
            problems.append(f"{label}: registered in {info['files'][0]} but not in docs/openapi.yaml")
            continue
        doc_path, op = found
        if shape(doc_path)[1] != pnames:
            problems.append(f"{label}: documented as {doc_path}: path parameter names differ")
        if op.get("x-podium-status") == "planned":
            problems.append(f"{label}: registered in {info['files'][0]} but documented as "
                            "x-podium-status: planned; remove the marker")
        if op.get("x-podium-access") != info["access"]:
            problems.append(f"{label}: x-podium-access is '{op.get('x-podium-access')}' but the "
                            f"router says Access::{info['access']}")

    # Docs -> router.
    registered_shapes = {(m, shape(p)[0]) for (m, p) in routes}
    for (method, pshape), (path, op) in sorted(documented.items()):
        label = f"{method.upper()} {path}"
        if op.get("x-podium-status") == "planned":
            continue
        if (method, pshape) not in registered_shapes:
            problems.append(f"{label}: documented but not registered in backend/ (mark it "
                            "x-podium-status: planned or remove it)")

    # Security requirements agree with the access rule.
    for (method, pshape), (path, op) in sorted(documented.items()):
        label = f"{method.upper()} {path}"
        access = op.get("x-podium-access")
        security = op.get("security", doc.get("security"))
        schemes = set()
        for requirement in security or []:
            schemes.update((requirement or {}).keys())
        if access == "open" and schemes:
            problems.append(f"{label}: open operation must have 'security: []'")
        if access == "agent" and schemes != {"bearerAuth"}:
            problems.append(f"{label}: agent operation must accept bearerAuth only")
        if access in ("reader", "writer", "admin") and schemes != {"bearerAuth", "sessionCookie"}:
            problems.append(f"{label}: user operation must accept bearerAuth and sessionCookie")

    # Every $ref resolves.
    refs = []
    all_refs(doc, refs)
    for ref in sorted(set(refs)):
        if resolve_ref(doc, ref) is None:
            problems.append(f"unresolved $ref {ref}")

    problems.extend(open_response_schemas(doc, paths))

    planned = sorted(f"{m.upper()} {p}" for (m, _), (p, op) in documented.items()
                     if op.get("x-podium-status") == "planned")
    print(f"router: {len(routes)} routes; docs: {len(documented)} operations, {len(planned)} planned")
    for p in planned:
        print(f"  planned: {p}")
    if problems:
        for p in problems:
            print(f"FAIL: {p}")
        return 1
    print("OK: docs/openapi.yaml agrees with the router")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
