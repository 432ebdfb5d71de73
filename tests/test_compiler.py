"""Compiled policies are Python code objects; the generated source is safe and readable."""

from fumarole.policy_lang.compiler import compile_module
from fumarole.runtime.bundles.bundle import compile_sources

from tests.helpers import checked


def test_compiles_to_one_code_object_without_the_syntax_tree():
    module = compile_module(checked("plugin p\n\non job_order(job):\n    order by job.priority desc\n"))
    assert module.code.co_filename == "<policy test.policy>"
    assert "def __build__(_rt, _H, _args):" in module.source
    assert "policy_lang" not in module.source  # nothing from the front end at run time


def test_names_cannot_reach_python():
    src = 'plugin p\n\non allocate(task):\n    let __import__ = "os"\n    let eval = __import__ + "\\")"\n'
    module = compile_module(checked(src))
    assert "v___import__ = 'os'" in module.source
    assert "v_eval = (v___import__ + '\")')" in module.source


def test_key_order_hook_becomes_a_comparison():
    library = compile_sources([("p.policy", "plugin p\n\non job_order(job):\n    order by job.priority desc, job.uid\n")])
    from types import SimpleNamespace

    hooks = library.plugins["p"].instantiate(None, SimpleNamespace(), {})
    a = SimpleNamespace(priority=1, uid="a")
    b = SimpleNamespace(priority=5, uid="b")
    c = SimpleNamespace(priority=5, uid="c")
    assert hooks["job_order"](a, b) == 1 and hooks["job_order"](b, a) == -1
    assert hooks["job_order"](b, c) == -1 and hooks["job_order"](b, b) == 0


def test_policy_position_maps_back_from_generated_lines():
    module = compile_module(checked("plugin p\n\non allocate(task):\n    let j = task.job\n"))
    lines = module.source.splitlines()
    index = next(i for i, line in enumerate(lines) if "v_j =" in line)
    assert module.policy_position(index + 1) == (4, 5)
