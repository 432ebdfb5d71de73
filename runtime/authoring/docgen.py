"""Generate docs/stdlib.md from runtime/schema.yaml: `python -m fumarole.runtime.authoring.docgen > docs/stdlib.md`.

The schema is the single source of what policies can use; the reference page
is derived from it so the two never disagree (tests/test_docs.py checks).
"""

from __future__ import annotations

import yaml
from fumarole.runtime.bundles.environment import SCHEMA_FILE

HEADER = """# The standard library

Everything a policy can name, generated from `runtime/schema.yaml` by
`python -m fumarole.runtime.authoring.docgen > docs/stdlib.md`.  Types written `T?` may be
`none` and must be checked before use (docs/language.md).
"""


def _params(spec: dict) -> str:
    return ", ".join(spec.get("params", []))


def render(schema: dict) -> str:
    out = [HEADER, "## Enumerations", ""]
    for name, values in schema["enums"].items():
        shown = ", ".join(f'"{v}"' for v in values)
        out.append(f"* `{name}`: {shown}")
    out += ["", "## Globals", "", "| name | type | meaning |", "| --- | --- | --- |"]
    for name, spec in schema["globals"].items():
        out.append(f"| `{name}` | `{spec['type']}` | {spec.get('doc', '')} |")
    out += ["", "## Types", ""]
    for name, spec in schema["types"].items():
        params = f"[{', '.join(spec['params'])}]" if spec.get("params") else ""
        out += [f"### {name}{params}", "", spec.get("doc", ""), ""]
        attributes = spec.get("attributes") or {}
        if attributes:
            out += ["| attribute | type | meaning |", "| --- | --- | --- |"]
            for attr, a in attributes.items():
                a = a if isinstance(a, dict) else {"type": a}
                writable = " (writable)" if a.get("writable") else ""
                out.append(f"| `{attr}` | `{a['type']}` | {a.get('doc', '')}{writable} |")
            out.append("")
        methods = spec.get("methods") or {}
        if methods:
            out += ["| method | returns | meaning |", "| --- | --- | --- |"]
            for meth, m in methods.items():
                out.append(f"| `{meth}({_params(m)})` | `{m.get('returns', 'void')}` | {m.get('doc', '')} |")
            out.append("")
    out += ["## Functions", "", "| function | returns | meaning |", "| --- | --- | --- |"]
    for name, spec in schema["functions"].items():
        out.append(f"| `{name}({_params(spec)})` | `{spec.get('returns', 'void')}` | {spec.get('doc', '')} |")
    out += ["", "Built-ins: `len`, `min`, `max`, `sum`, `range`, `str`, `int`, `float`; lists: `append`, `copy()`; "
            "maps: `get(key, default)`, `keys()`, `values()`, `remove(key)`, `copy()`.", "",
            "Times and durations are floats of seconds: a time counts from the epoch (`now`, `creation`, "
            "`start_time`, `time(...)`, `parse_time(...)`), a duration is a difference (`2h`, `90s`, "
            "`parse_duration(...)`), so they mix with plain arithmetic: `now - time(t) >= 2h`, "
            "`time(a) + 30m < time(b)`.  Strings compare with `==` and `<`, test substrings with `in` and "
            "join with `+`.", ""]
    return "\n".join(out)


def main() -> None:
    print(render(yaml.safe_load(SCHEMA_FILE.read_text())), end="")


if __name__ == "__main__":
    main()
