"""latest.json and the Markdown table of docs/benchmarks.md (between two marker comments, so the
rest of the page is prose kept by hand)."""

from kit.results import commit, machine, write_json as write_doc

BEGIN = "<!-- limits:begin (bench/limits.py rewrites this table) -->"
END = "<!-- limits:end -->"


def write_json(path, scenarios, extra):
    doc = {"commit": commit(), "machine": machine(), "scenarios": scenarios, **extra}
    write_doc(path, doc)
    return doc


def _fmt(v):
    if v is None:
        return "—"
    if isinstance(v, float):
        if abs(v) >= 1000:
            return f"{v:,.0f}"
        return f"{v:.2f}" if abs(v) < 100 else f"{v:.1f}"
    return str(v)


def table(doc):
    lines = [f"Written at commit `{doc['commit']}`, {doc['machine']['cpus']} cores "
             f"({doc['machine']['cpu_model']}), {doc['date']} (this invocation: "
             f"{doc['wall_seconds']:.0f} s; rows kept from earlier ones by --merge say when they "
             "were measured).", "",
             "| scenario | value | unit | baseline (same run) | ratio | target | meets | measured |",
             "|---|---|---|---|---|---|---|---|"]
    for s in doc["scenarios"]:
        m = s.get("measured") or {}
        when = f"`{m.get('commit') or '?'}` {m.get('date') or '?'}"
        if s.get("details", {}).get("result_date"):
            when += f" (result of {s['details']['result_date']})"
        lines.append(f"| `{s['name']}` | {_fmt(s['value'])} | {s['unit']} | "
                     f"{_fmt(s['baseline_value'])} | {_fmt(s['ratio'])} | {s['target']} | "
                     f"{'yes' if s['meets'] else '**no**'} | {when} |")
    return "\n".join(lines)


def write_markdown(path, doc):
    with open(path) as f:
        text = f.read()
    block = f"{BEGIN}\n{table(doc)}\n{END}"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + block + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(text)
