"""The house rules of runtime/: stages import only the stages below them, and no module cycles."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

RUNTIME = Path(__file__).resolve().parent.parent / "runtime"
# Lowest first: a stage may import only from itself and the stages before it.
STAGES = ["api", "ingest", "k8s", "framework", "bundles", "authoring", "lsp", "whatif", "serve", "cli"]


def _module(path: Path) -> str:
    return "fumarole.runtime." + ".".join(path.relative_to(RUNTIME).with_suffix("").parts)


def _imports(path: Path) -> set[str]:
    """Every fumarole.runtime module a file imports, at any depth (function-level and TYPE_CHECKING too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("fumarole.runtime"):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("fumarole.runtime"))
    return found


def _graph() -> nx.DiGraph:
    modules = {_module(p): p for p in RUNTIME.rglob("*.py") if p.name != "__init__.py"}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        graph.add_edges_from((name, target) for target in _imports(path) if target in modules and target != name)
    return graph


def _stage(module: str) -> str:
    return module.split(".")[2]


def test_runtime_has_no_import_cycles():
    assert list(nx.simple_cycles(_graph())) == []


def test_each_stage_imports_only_the_stages_below_it():
    wrong = [(a, b) for a, b in _graph().edges if STAGES.index(_stage(b)) > STAGES.index(_stage(a))]
    assert wrong == []


def test_every_stage_is_a_documented_package():
    for stage in STAGES:
        init = RUNTIME / stage / "__init__.py"
        assert ast.get_docstring(ast.parse(init.read_text())), stage


def _calls(path: Path, name: str) -> bool:
    """Whether the file calls ``name(...)``, as a plain name or an attribute (``x.name(...)``)."""
    return any(isinstance(node, ast.Call) and name in (getattr(node.func, "id", None), getattr(node.func, "attr", None))
               for node in ast.walk(ast.parse(path.read_text())))


def _callers(name: str, *folders: str) -> list[str]:
    root = RUNTIME.parent
    return sorted(str(p.relative_to(root)) for folder in folders for p in (root / folder).rglob("*.py")
                  if _calls(p, name))


def test_only_the_lifecycle_makes_and_runs_sessions():
    """Every session is made by ``lifecycle.new_session`` (in the runtime, the tests and the
    benchmarks alike), and in the runtime only lifecycle.py runs a session's actions (Volcano's
    one runOnce): no command makes a session and runs it its own way."""
    assert _callers("Session", "runtime", "tests", "benchmarks") == ["runtime/framework/lifecycle.py"]
    assert _callers("run_actions", "runtime") == ["runtime/framework/lifecycle.py"]
