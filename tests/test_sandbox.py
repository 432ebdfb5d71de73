"""No policy text ever becomes Python: a corpus of escape attempts (issue 8, section 1).

Each attempt is either refused with a diagnostic or runs as the plain data it
is: the sentinel file it tries to create never appears and ``os.system`` is
never called.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from fumarole.policy_lang.compiler import template
from fumarole.runtime.bundles.environment import SCHEMA_FILE
from fumarole.runtime.framework.namespace import namespace

BUNDLE = ("apiVersion: fumarole/v1\nkind: PolicyBundle\nmetadata: {name: b}\nuses: [volcano]\n"
          "sources: [plugins/*.policy]\nactions: [enqueue, allocate]\n"
          "tiers:\n- plugins: [{name: priority}, {name: gang}, {name: x}]\n- plugins: [{name: predicates}, "
          "{name: proportion}, {name: nodeorder}]\n")

# The reproducer of issue 8, verbatim: `{2}` in the first argument was substituted again by the old compiler.
REPRODUCER = r'''plugin pwn
state r: Resource
on open:
    r = total_resource.with_value("{2}", 1.0 if len(["+(\"\" if _k8s.__builtins__[\"__import__\"](\"os\").system(\"id\") else \"\")+"]) > 0 else 2.0)
'''


def payloads(sentinel: Path) -> list[str]:
    """Texts that would run code if any step pasted them into Python: placeholders, quotes, format strings."""
    touch = f"__import__('os').system('touch {sentinel}')"
    return ([f"{{{n}}}" for n in range(10)]
            + ["{0}{1}{2}{3}", "{0.__class__}", "{0!r}", "%s%(x)s", "{}", "{{2}}",
               f"\" + {touch} + \"", f"' + {touch} + '", f"') or {touch} or ('", f"\") or {touch} or (\"",
               f"\n{touch}\n", f"+(\"\" if {touch} else \"\")+", f"{{2}}+(0 if {touch} else 0)+{{1}}"])


def quoted(text: str) -> str:
    """A policy string literal holding ``text`` exactly."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def every_string_position(texts: list[str]) -> str:
    """One plugin putting each text in every place a string can go: arguments of schema methods and
    functions whose Python is a template (``{0}``, ``{1}``...), map keys, defaults, messages."""
    opening, failures = [], []
    for text in texts:
        p = quoted(text)
        opening.append(f"""
    r = total_resource.with_value({p}, 1.0)
    h = total_resource.has({p}) or {p} in total_resource.names
    seen[{p}] = {p} + str(h) + str(r.get({p}))
    parts = split({p}, {p}) + [trim_space({p}), str(parse_float({p})), str(parse_duration({p}))]
    seen[label] = str(len(parts)) + str(parse_clock({p})) + str(int_or_percent({p}, 3))
    h = hierarchy_enabled({p})
    for job in jobs:
        job.set_condition({p}, {p}, {p})
        for task in job.tasks:
            job.record_fit_error(task, {p})""")
        failures.append(f"    fail {p} when node.name == {p}")
    p = quoted(texts[0])
    return (f"plugin x\n\narg label: string = {p} from {p}\nstate r: Resource\nstate seen: map[string, string]\n\n"
            "on open:\n    let h = false\n    let parts: list[string] = []" + "".join(opening)
            + "\n\non predicate(task, node):\n" + "\n".join(failures) + "\n")


def write_bundle(folder: Path, policy: str) -> Path:
    (folder / "plugins").mkdir(parents=True)
    (folder / "bundle.yaml").write_text(BUNDLE)
    (folder / "plugins/x.policy").write_text(policy)
    return folder


@pytest.fixture
def no_shell(monkeypatch):
    """Record every attempt to start a process instead of starting it."""
    calls: list[object] = []
    monkeypatch.setattr(os, "system", lambda *a: calls.append(a) or 0)
    monkeypatch.setattr(os, "popen", lambda *a, **k: calls.append(a))
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: calls.append(a))
    return calls


def test_the_reproducer_runs_as_data(cli, root, tmp_path, no_shell):
    bundle = write_bundle(tmp_path / "b", REPRODUCER.replace("plugin pwn", "plugin x"))
    assert cli("check", str(bundle)).code == 0
    result = cli("run", str(root / "examples/cluster.yaml"), "--bundle", str(bundle))
    assert result.code == 0, result.err
    assert no_shell == []


def test_payloads_in_every_string_position_are_only_data(cli, root, tmp_path, no_shell):
    sentinel = tmp_path / "pwned"
    bundle = write_bundle(tmp_path / "b", every_string_position(payloads(sentinel)))
    checked = cli("check", str(bundle))
    assert checked.code == 0, checked.out
    result = cli("run", str(root / "examples/cluster.yaml"), "--bundle", str(bundle), "--format", "json")
    assert result.code == 0, result.err
    assert not sentinel.exists() and no_shell == []


def test_strings_keep_every_character_they_were_given(tmp_path):
    from fumarole.runtime.bundles.library import compile_sources

    texts = payloads(tmp_path / "s") + ["zone-é", "日本", "a\\b", "tab\there", "\x00", "\N{BULLET}"]
    items = ", ".join(quoted(t) for t in texts)
    library = compile_sources([("m.policy", f"module m\n\ndef texts() -> list[string] = [{items}]\n")])
    assert library.modules["m"].instantiate(None, None, {})["texts"]() == texts


DUNDERS = ["total_resource.__class__", "(fn(x: int) => x).__globals__", "nodes.__class__.__mro__", "__import__",
           "__builtins__", "session.__dict__", "total_resource.__class__.__subclasses__()"]


def test_dunder_names_are_refused_at_their_place(cli, tmp_path):
    policy = tmp_path / "x.policy"
    policy.write_text("plugin x\n\non open:\n" + "".join(f"    let a{i} = {e}\n" for i, e in enumerate(DUNDERS)))
    result = cli("check", str(policy))
    assert result.code == 1
    for line, expr in enumerate(DUNDERS, 4):
        first = re.search(r"__\w+", expr)
        col = len(f"    let a{line - 4} = ") + 1 + first.start()
        assert f"x.policy:{line}:{col}: error[P006]: '{first.group()}' is reserved" in result.out


INTERNALS = ["_rt", "_H", "_B", "_args", "_k8s", "_go", "_text", "_cond", "_fields", "_math", "_res", "_div", "_str", "_str_split", "_parse_float",
             "_FitError", "_budget_of", "_victims", "_statuses", "g_0", "s_r", "v_a", "a_x", "c_k", "f_g", "eval",
             "exec", "open", "getattr"]


def test_names_of_the_namespace_internals_are_unknown_names(cli, tmp_path):
    policy = tmp_path / "x.policy"
    policy.write_text("plugin x\n\non open:\n" + "".join(f"    let a{i} = {n}\n" for i, n in enumerate(INTERNALS)))
    result = cli("check", str(policy))
    assert result.code == 1
    for line, name in enumerate(INTERNALS, 4):
        col = len(f"    let a{line - 4} = ") + 1
        assert f"x.policy:{line}:{col}: error[E100]: unknown name '{name}'" in result.out


def test_a_policy_may_use_those_names_for_its_own_values(cli, root, tmp_path, no_shell):
    body = "".join(f"    let {n} = {i}\n    total = total + {n}\n" for i, n in enumerate(INTERNALS))
    bundle = write_bundle(tmp_path / "b", f"plugin x\n\non open:\n    let total = 0\n{body}"
                                          f"    pass when total == {sum(range(len(INTERNALS)))}\n")
    result = cli("run", str(root / "examples/cluster.yaml"), "--bundle", str(bundle))
    assert result.code == 0, result.err


def test_the_namespace_holds_no_way_back_to_python():
    scope = namespace()
    assert sorted(scope["__builtins__"]) == ["abs", "bool", "float", "int", "len", "list", "max", "min", "sum"]
    for name, value in scope.items():
        assert not isinstance(value, ModuleType), name
        for attr in vars(value).values() if hasattr(value, "__dict__") and not isinstance(value, type) else ():
            assert not isinstance(attr, ModuleType), (name, attr)


def test_every_schema_expression_reaches_only_the_namespace():
    """The runtime's own `py` expressions (the only Python parsed as text) name nothing outside the namespace."""
    import ast

    schema = yaml.safe_load(SCHEMA_FILE.read_text())
    texts = [spec["py"] for section in ("globals", "functions") for spec in schema[section].values() if "py" in spec]
    for t in schema["types"].values():
        for group in ("attributes", "methods"):
            texts += [spec["py"] for spec in (t.get(group) or {}).values() if isinstance(spec, dict) and "py" in spec]
    scope = namespace()
    allowed = set(scope) | set(scope["__builtins__"]) | {"_rt", "_H", "_B"}  # the builder's locals
    for text in texts:
        tree = template(text, [ast.Name(id="_arg", ctx=ast.Load())] * 5)
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - {"_arg"}
        assert names <= allowed, (text, names - allowed)
        roots = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                 and n.value.id in ("_k8s", "_go", "_text", "_cond", "_fields", "_math", "_res")]
        for attr in roots:
            assert hasattr(scope[attr.value.id], attr.attr), text
        assert not any(isinstance(n, ast.Attribute) and n.attr.startswith("__") for n in ast.walk(tree)), text
