"""Everything the checker rejects before a session runs, with the message users see."""

import pytest

from tests.helpers import checked, errors, warnings


def test_misspelt_attribute_suggests_the_right_one():
    src = "plugin p\n\non overused(queue) = queue.reclaimble\n"
    [(code, line, col, message)] = errors(src)
    assert (code, line, col) == ("E101", 3, 28)
    assert message == "unknown attribute 'reclaimble' of Queue"
    diag = checked(src).diagnostics[0]
    assert diag.hint == "did you mean 'reclaimable'?"


def test_unknown_name_and_hook():
    assert errors("plugin p\n\non overused(q) = foo\n")[0][:2] == ("E100", 3)
    [(code, *_rest, message)] = errors("plugin p\n\non overuse(q) = true\n")
    assert code == "E104" and message == "unknown hook 'overuse'"


def test_enum_literals_are_checked():
    [(code, _l, _c, message)] = errors('plugin p\n\non job_ready(j) = j.phase == "Inquue"\n')
    assert code == "E141" and "'Inquue' is not a PodGroupPhase" in message


def test_optional_values_must_be_narrowed():
    src = "plugin p\n\non allocate(task):\n    let j = task.job\n    let n = j.min_available\n"
    [(code, line, *_)] = errors(src)
    assert (code, line) == ("E113", 5)
    ok = "plugin p\n\non allocate(task):\n    let j = task.job\n    return when j == none\n    let n = j.min_available\n"
    assert errors(ok) == []
    in_and = "plugin p\n\non preemptable(p, cs):\n    for c in cs:\n        victim c when c.job != none and c.job.priority < 3\n"
    assert errors(in_and) == []


def test_rule_forms_belong_to_their_hook_kind():
    [(code, _l, _c, message)] = errors("plugin p\n\non job_pipelined(job):\n    for t in job.tasks:\n        victim t\n")
    assert code == "E120" and "`victim` is not allowed in hook 'job_pipelined' (vote)" in message
    assert errors("plugin p\n\non job_ready(job):\n    permit\n")[0][0] == "E120"


def test_hook_signature_and_return_type():
    assert errors("plugin p\n\non overused(a, b) = true\n")[0][0] == "E121"
    assert errors("plugin p\n\non overused(q) = 1\n")[0][0] == "E110"
    assert errors("plugin p\n\non node_order(t, n):\n    let x = 1\n")[0][0] == "E122"


def test_recursion_is_rejected():
    src = "plugin p\n\ndef a(x: int) -> int = b(x)\ndef b(x: int) -> int = a(x)\n\non overused(q) = a(1) > 0\n"
    codes = [e[0] for e in errors(src)]
    assert codes == ["E132"]


def test_type_errors_in_expressions():
    assert errors("plugin p\n\non overused(q) = q.weight + \"x\" == 1\n")[0][0] == "E110"
    assert errors('plugin p\n\non allocatable(q, t) = t.request >= q.guarantee\n')[0][0] in ("E110", "E113")


def test_arguments_are_typed():
    assert errors('plugin p\n\narg w: Resource = 1\n\non overused(q) = w\n')[0][0] == "E140"
    assert errors('plugin p\n\narg d: duration = 10\n\non overused(q) = d > 1\n')[0][0] == "E140"


def test_warnings_for_unused_and_shadowed():
    src = "plugin p\n\narg unused: int = 1\n\non allocate(task):\n    let x = 1\n    if true:\n        let x = 2\n"
    codes = [w[0] for w in warnings(src)]
    assert "W200" in codes and "W202" in codes


def test_standard_library_checks_clean():
    from fumarole.runtime.bundles.library import standard_library

    lib = standard_library()
    assert lib.warnings == ()
    assert {"priority", "gang", "drf", "proportion", "predicates", "nodeorder", "binpack",
            "overcommit", "conformance"} <= set(lib.plugins)
    assert {"enqueue", "allocate", "backfill", "reclaim"} <= set(lib.actions)


def test_max_and_min_take_two_or_more_numbers_or_one_list_of_numbers():
    ok = ("plugin p\n\ndef top(xs: list[int]) -> int = max(xs)\n\n"
          "def low(xs: list[float]) -> float = min(xs)\n\ndef two(a: int) -> int = max(a, 3)\n")
    assert errors(ok) == []
    assert errors("plugin p\n\ndef top(xs: list[int]) -> float = max(xs)\n") == []  # an int is a float
    assert errors('plugin p\n\ndef top(xs: list[string]) -> int = max(xs)\n') == [
        ("E110", 3, 40, "max() of a list[string]")]
    assert errors("plugin p\n\ndef top(a: int) -> int = max(a)\n") == [
        ("E111", 3, 26, "'max' takes two or more numbers, or one list of numbers")]


# -- evaluation order of constants ---------------------------------------------------------------

@pytest.mark.parametrize("source, line, col, message", [
    ("let A = fn() => B\nlet B = 3\n\non job_order(a, b) = A() - B\n", 3, 17,
     "constant 'B' is used before its declaration (line 4)"),
    ("let A = B\nlet B = 3\n\non job_order(a, b) = A - B\n", 3, 9,
     "constant 'B' is used before its declaration (line 4)"),
    ("let A = B\nlet B = [1]\n\non job_order(a, b):\n    for x in A:\n        return x\n    return 0\n", 3, 9,
     "constant 'B' is used before its declaration (line 4)"),
    ("let A = A + 1\n\non job_order(a, b) = A\n", 3, 9, "constant 'A' is used in its own value"),
    ("def f() -> int = B\nlet A = f()\nlet B = 3\n\non job_order(a, b) = A\n", 4, 9,
     "'A' uses constant 'B' through f, which is declared below it (line 5)"),
    ("let A = f\nlet B = A()\ndef f() -> int = 1\n\non job_order(a, b) = B\n", 3, 9,
     "'A' uses definition 'f', which is declared below it (line 5)"),
    ("def f() -> int = g()\ndef g() -> int = C\nlet A = fn() => f()\nlet C = 1\n\non job_order(a, b) = A()\n", 5, 17,
     "'A' uses constant 'C' through f -> g, which is declared below it (line 6)"),
])
def test_a_constant_reading_what_is_not_yet_evaluated_is_e134(source, line, col, message):
    """Constants are evaluated in the order they are written: reading one below (directly, in a
    function value, or through definitions) is an error at the use, never an unknown type."""
    assert errors("plugin p\n\n" + source) == [("E134", line, col, message)]


def test_constants_and_definitions_in_order_are_fine():
    source = ("plugin p\n\nlet B = 3\ndef f() -> int = B + C\nlet C = 4\nlet A = fn() => B\n"
              "def g() -> int = A() + f()\nlet D = g()\n\non job_order(a, b) = D\n")
    assert errors(source) == []


def test_the_compiler_refuses_an_expression_of_unknown_type():
    """Code is never generated blind: an expression the checker left without a type stops the
    compiler (an unknown type would compile to an operator the budget does not charge)."""
    from fumarole.policy_lang.compiler import UncheckedType
    from fumarole.policy_lang.driver import compile_checked
    from fumarole.policy_lang.types import UNKNOWN

    module = checked("plugin p\n\nlet A = 2\n\non job_order(a, b):\n    let x = A * A\n    return x\n")
    assert module.ok
    compile_checked(module)
    first = next(key for key, t in module.types.items() if t.name == "int")
    module.types[first] = UNKNOWN
    with pytest.raises(UncheckedType):
        compile_checked(module)


def test_a_node_the_checker_left_without_an_entry_is_an_internal_error_naming_it():
    """Later stages read the checker's side tables by the nodes' stable ids; a miss is a fumarole bug
    named with the node and its position, never a default (a missing type once became `unknown`)."""
    import pytest

    from fumarole.policy_lang import ast as A
    from fumarole.policy_lang.checked import CheckerContractError
    from fumarole.policy_lang.driver import compile_checked
    from fumarole.policy_lang.walk import preorder

    module = checked("plugin p\n\non node_order(task, node):\n    let n = node.idle.cpu\n    return n\n", "p.policy")
    assert module.ok
    used = next(n for n in preorder(module.module) if isinstance(n, A.Name) and n.id == "n")
    del module.refs[used.nid]
    with pytest.raises(CheckerContractError, match=r"^p\.policy:5:12: the checker left no name resolution for this Name$"):
        compile_checked(module)


def test_node_ids_are_the_same_in_every_parse_of_a_file():
    """Side tables keyed by them need no re-keying after the compile cache, whose entries stay byte
    for byte the same; a tree's root holds its largest id, and victim-rule expansion numbers after it."""
    from fumarole.policy_lang.parser import parse
    from fumarole.policy_lang.walk import preorder

    source = "plugin p\n\non job_order(a, b):\n    order by a.priority desc\n"
    first, second = parse(source, "p.policy"), parse(source, "p.policy")
    ids = [n.nid for n in preorder(first)]
    assert ids == [n.nid for n in preorder(second)]
    assert len(set(ids)) == len(ids) and first.nid == max(ids)


def test_a_used_modules_constant_without_a_type_is_an_internal_error_naming_it():
    """A used module is checked in full before its users (the driver orders them), so each of its
    constants has a type; a miss is a fumarole bug at the constant, not an `unknown` that checks
    quietly."""
    from fumarole.policy_lang.checked import CheckerContractError
    from fumarole.policy_lang.driver import check_module
    from fumarole.policy_lang.parser import parse
    from fumarole.runtime.bundles.environment import load_environment

    env = load_environment()
    shared = check_module(env, parse("module shared\n\nlet LIMIT = 3\n", "shared.policy"))
    user = parse("plugin p\n\nuse shared\n\non job_order(a, b) = LIMIT\n", "p.policy")
    assert check_module(env, user, {"shared": shared}).ok
    del shared.types[shared.consts["LIMIT"].nid]
    with pytest.raises(CheckerContractError, match=r"^shared\.policy:3:1: the checker left no type for this ConstDecl$"):
        check_module(env, user, {"shared": shared})
