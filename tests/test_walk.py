"""The one walk of the syntax tree (policy_lang/walk.py): what it reaches, in which order, where it stops."""

from __future__ import annotations

from pathlib import Path

from fumarole.policy_lang import ast as A
from fumarole.policy_lang.fmt import expr_text
from fumarole.policy_lang.parser import parse
from fumarole.policy_lang.walk import EXPRESSIONS, STATEMENTS, children, preorder, statements, visit

ROOT = Path(__file__).resolve().parent.parent

EVERY_CONSTRUCT = """\
module m

use other
arg limit: int = 1 from "limit"
state seen: map[string, int]
let K: int = -1

def f(x: int, g: fn[int, int]) -> int:
    let m = {"a": [x], "b": [y * 2 for y in [1, 2] if y > 0]}
    let n = {k: v for k in ["a"] if k != "" }
    seen["x"] += 1
    seen["y"] = g(x) if x > 0 else len(m, key: n)
    return x when x > limit
    if not x:
        pass
    elif x == 1:
        return (fn(z: int) => z + 1)(x)
    else:
        fail "no"
    for t in [1]:
        continue
    drain q from [1] while q > 0:
        break
    while false:
        victim x
    return m.a[0]
"""


def _names(nodes) -> list[str]:
    return [expr_text(n) if isinstance(n, EXPRESSIONS) else type(n).__name__ for n in nodes]


def test_the_walk_reaches_every_kind_of_node_a_policy_can_hold():
    """Each field of each node class that can hold a node is walked: a tree using every construct
    gives every node class ast.py declares (the plugin-only statements are in the next test)."""
    module = parse(EVERY_CONSTRUCT, "m.policy")
    found = {type(n) for n in preorder(module)}
    assert found >= set(EXPRESSIONS) | {A.Module, A.Use, A.ArgDecl, A.StateDecl, A.ConstDecl, A.FuncDef, A.Param,
                                        A.TypeExpr, A.Let, A.Assign, A.AugAssign, A.Return, A.Break, A.Continue,
                                        A.Pass, A.Fail, A.When, A.If, A.For, A.Drain, A.While, A.Victim}


def test_hook_statements_and_hooks_are_walked():
    module = parse("plugin p\n\non job_order(a, b):\n    order by a.priority desc, b.name\n"
                   "on job_ready(job):\n    permit\non allocate(task):\n    task.name\n", "p.policy")
    found = {type(n) for n in preorder(module)}
    assert {A.HookDef, A.OrderBy, A.Vote, A.ExprStmt} <= found
    order_by = next(n for n in preorder(module) if isinstance(n, A.OrderBy))
    assert _names(children(order_by)) == ["a.priority", "b.name"]


def test_children_come_in_field_order_and_preorder_puts_parents_first():
    expr = parse("module m\n\nlet K: int = f(1 + 2, key: 3)[4]\n", "m.policy").decls[0].value
    assert _names(children(expr)) == ["f(1 + 2, key: 3)", "4"]
    assert _names(preorder(expr)) == ["f(1 + 2, key: 3)[4]", "f(1 + 2, key: 3)", "f", "1 + 2", "1", "2", "3", "4"]
    assert _names(preorder(expr, last_child_first=True)) == [
        "f(1 + 2, key: 3)[4]", "4", "f(1 + 2, key: 3)", "3", "1 + 2", "2", "1", "f"]


def test_descend_false_keeps_the_walk_out_of_a_subtree_but_gives_the_node():
    expr = parse("module m\n\nlet K: list[int] = [x for x in [1]] + [2]\n", "m.policy").decls[0].value
    walked = _names(preorder(expr, lambda n: not isinstance(n, A.ListComp)))
    assert walked == ["[x for x in [1]] + [2]", "[x for x in [1]]", "[2]", "2"]
    seen: list[A.Node] = []
    visit(expr, lambda n: seen.append(n) or not isinstance(n, A.ListLit))
    assert _names(seen) == ["[x for x in [1]] + [2]", "[x for x in [1]]", "x", "[1]", "[2]"]


def test_statements_enter_blocks_and_guarded_statements_unless_told_not_to():
    body = parse("plugin p\n\non preemptable(preemptor, candidates):\n    for c in candidates:\n"
                 "        if c.priority > 1:\n            victim c when c.name != \"\"\n"
                 "    victim candidates[0]\n", "p.policy").decls[0].body
    assert [(type(s).__name__, s.span.line) for s in statements(body)] == [
        ("For", 4), ("If", 5), ("When", 6), ("Victim", 6), ("Victim", 7)]
    assert [type(s).__name__ for s in statements(body, guarded=False)] == ["For", "If", "When", "Victim"]
    assert all(isinstance(s, STATEMENTS) for s in statements(body))


def test_a_tree_of_any_depth_is_walked_without_recursion():
    depth = 20_000
    expr: A.Expr = A.Name("x", A.Span())
    for _ in range(depth):
        expr = A.Unary("-", expr, A.Span())
    assert sum(1 for _ in preorder(expr)) == depth + 1
    assert sum(1 for _ in preorder(expr, last_child_first=True)) == depth + 1


def test_the_standard_library_walks_the_same_both_ways_round():
    """The mirrored walk gives the same nodes, so no consumer sees a node the other misses."""
    for path in sorted((ROOT / "policies" / "volcano").rglob("*.policy")):
        module = parse(path.read_text(), path.name)
        forward = [n.nid for n in preorder(module)]
        assert sorted(forward) == sorted(n.nid for n in preorder(module, last_child_first=True))
        assert len(set(forward)) == len(forward)
