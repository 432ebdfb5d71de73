"""Compiled policies are Python code objects; the generated source is safe and readable."""

import pytest

from fumarole.policy_lang.driver import compile_checked
from fumarole.runtime.bundles.library import compile_sources
from fumarole.runtime.framework.namespace import namespace

from tests.helpers import checked


def test_compiles_to_one_code_object_without_the_syntax_tree():
    module = compile_checked(checked("plugin p\n\non job_order(job):\n    order by job.priority desc\n"))
    assert module.code.co_filename == "<policy test.policy>"
    assert "def __build__(_rt, _H, _args):" in module.source
    assert "policy_lang" not in module.source  # nothing from the front end at run time


def test_names_cannot_reach_python():
    src = 'plugin p\n\non allocate(task):\n    let eval = "os"\n    let exec = eval + "\\")"\n'
    module = compile_checked(checked(src))
    assert "v_eval = 'os'" in module.source
    assert "v_exec = _B.concat(v_eval, \'\")\')" in module.source


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
    module = compile_checked(checked("plugin p\n\non allocate(task):\n    let j = task.job\n"))
    scope = namespace()
    exec(module.code, scope)
    hooks = scope["__build__"](None, None, {})
    try:
        hooks["allocate"](None)  # None has no job_id: fails on the line of `let j`
    except AttributeError as exc:
        tb = exc.__traceback__
        while tb.tb_next is not None:
            tb = tb.tb_next
        assert tb.tb_frame.f_code.co_filename == module.filename
        assert module.policy_position(tb.tb_lineno) == (4, 5)
    else:
        raise AssertionError("expected an AttributeError")


@pytest.mark.parametrize("expr, value", [
    ("- " * 150 + "1", 1), ("not " * 150 + "true", True), (" + ".join(["1"] * 190), 190),
    ("[" * 150 + "1" + "]" * 150, None), ("(" * 1000 + "2" + ")" * 1000, 2), ("1e308 * 10.0", float("inf")),
    (" and ".join(["true"] * 190), True), ("f(" * 90 + "1" + ")" * 90, 1),
])
def test_whatever_checks_compiles_and_runs_nested_as_deep_as_the_parser_allows(expr, value):
    library = compile_sources([("m.policy", f"module m\n\ndef f(x: int) -> int = x\n\nlet a = {expr}\n\n"
                                            "def get() -> bool = a == a\n")])
    defs = library.modules["m"].instantiate(None, None, {})
    assert defs["get"]() is (value == value)  # nan is the one value unequal to itself


def test_copy_of_a_list_or_a_map_is_a_new_one_with_the_same_entries():
    src = ("module m\n\n"
           "def grown() -> list[int]:\n    let xs = [1, 2]\n    let ys = xs.copy()\n    ys.append(3)\n"
           "    return xs + ys\n\n"
           'def shrunk() -> list[int]:\n    let m = {"a": 1, "b": 2}\n    let n = m.copy()\n    n.remove("a")\n'
           '    n["c"] = 3\n    return m.values() + n.values()\n')
    defs = compile_sources([("m.policy", src)]).modules["m"].instantiate(None, None, {})
    assert defs["grown"]() == [1, 2, 1, 2, 3]
    assert defs["shrunk"]() == [1, 2, 2, 3]


def test_a_library_function_of_the_session_is_handed_it_when_called_and_when_used_as_a_value():
    from types import SimpleNamespace

    src = ('module m\n\ndef direct() -> string = metrics_setting("type")\n\n'
           'def through_a_value() -> string:\n    let get = metrics_setting\n    return get("address")\n')
    metrics = {"type": "prometheus", "address": "10.0.0.1:9090"}
    session = SimpleNamespace(bundle=SimpleNamespace(config=SimpleNamespace(metrics=metrics)))
    defs = compile_sources([("m.policy", src)]).modules["m"].instantiate(session, None, {})
    assert defs["direct"]() == "prometheus"
    assert defs["through_a_value"]() == "10.0.0.1:9090"


_SAME_NAME_TWICE = ("module m\n\ndef total() -> int:\n    let sum_ = 0\n    for x in [1, 2]:\n        sum_ = sum_ + x\n"
                    "    for x in [10, 20]:\n        sum_ = sum_ + x * 2\n    return sum_ + len([x for x in [7] if x > 0])\n")


def test_the_compiler_names_each_binding_of_a_name_apart():
    """The checker records bindings (the node that declares each local), never Python names; the
    compile stage gives each binding its own identifier, so the two loop variables `x` of
    sibling loops and the comprehension's `x` are three locals, each read where it is bound."""
    from fumarole.policy_lang import ast as A
    from fumarole.policy_lang.local_names import LocalNames
    from fumarole.policy_lang.walk import preorder

    module = checked(_SAME_NAME_TWICE, "m.policy")
    assert module.ok
    assert all(ref.py == "" for ref in module.refs.values() if ref.kind == "local")  # no Python name from the checker
    names = LocalNames(module)
    declaring = [n for n in preorder(module.module) if isinstance(n, (A.For, A.ListComp))]
    assert sorted(names.declared(n) for n in declaring) == ["v_x", "v_x_1", "v_x_2"]
    reads = {names.read(module.ref_of(n)) for n in preorder(module.module) if isinstance(n, A.Name) and n.id == "x"}
    assert reads == {"v_x", "v_x_1", "v_x_2"}
    compiled = compile_checked(module)
    scope = namespace()
    exec(compiled.code, scope)
    hooks = scope["__build__"](None, None, {})
    assert hooks["total"]() == 1 + 2 + 20 + 40 + 1


def test_a_local_the_checker_recorded_no_binding_for_is_an_internal_error_naming_it():
    """The compile stage names only bindings the checker recorded: a missing one is a fumarole
    bug named with its position, never a made-up name."""
    from fumarole.policy_lang import ast as A
    from fumarole.policy_lang.checked import CheckerContractError
    from fumarole.policy_lang.walk import preorder

    module = checked(_SAME_NAME_TWICE, "m.policy")
    second_loop = [n for n in preorder(module.module) if isinstance(n, A.For)][1]
    del module.bindings[second_loop.nid]
    with pytest.raises(CheckerContractError, match=r"^m\.policy:7:\d+: the checker recorded no binding for this For$"):
        compile_checked(module)
