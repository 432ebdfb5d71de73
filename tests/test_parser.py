import pytest
from fumarole.policy_lang import ast as A
from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.policy_lang.parser import duration_seconds, parse


def test_spans_and_structure():
    module = parse("plugin p\n\non job_order(job):\n    order by job.priority desc\n", "p.policy")
    assert (module.kind, module.name) == ("plugin", "p")
    hook = module.decls[0]
    assert isinstance(hook, A.HookDef) and hook.names == ("job_order",)
    order = hook.body[0]
    assert isinstance(order, A.OrderBy) and order.keys[0][1] is True
    assert (order.span.line, order.span.col) == (4, 5)


def test_when_guards_and_comprehensions():
    src = "action a\n\non execute:\n    let xs = [n for n in nodes if n.unschedulable]\n    continue when len(xs) == 0\n"
    body = parse(src).decls[0].body
    assert isinstance(body[0].value, A.ListComp)
    assert isinstance(body[1], A.When) and isinstance(body[1].stmt, A.Continue)


def test_durations():
    assert duration_seconds("10m") == 600 and duration_seconds("1h30m") == 5400
    assert duration_seconds("250ms") == 0.25


@pytest.mark.parametrize("source, line, col, message", [
    ("plugin p\n\non open:\n    let x = \n", 4, 13, "unexpected end of line"),
    ("plugin p\n\non open:\n    x = 1 $ 2\n", 4, 11, "unexpected character '$'"),
    ("plugin p\n\ndef f( -> int = 1\n", 3, 8, "unexpected '->'"),
    ("plugin p\n\non open:\n    if true:\n", 4, 13, "unexpected change of indentation"),
])
def test_syntax_errors_name_line_and_column(source, line, col, message):
    with pytest.raises(FumaroleError) as info:
        parse(source, "bad.policy")
    d = info.value.diagnostics[0]
    assert (d.code, d.file, d.span.line, d.span.col) == ("P001", "bad.policy", line, col)
    assert d.message == message
    rendered = info.value.render()
    assert rendered.splitlines()[0].startswith(f"bad.policy:{line}:{col}: error[P001]")
    assert "^" in rendered


def test_truncated_file_is_a_syntax_error_at_the_end():
    with pytest.raises(FumaroleError) as info:
        parse("plugin p\n\non reclaimable(r, cs):\n    for c in cs:\n        victim c when c.status ==", "t.policy")
    assert info.value.diagnostics[0].span.line == 5


def test_stray_indentation_points_at_the_indented_line():
    with pytest.raises(FumaroleError) as info:
        parse("plugin p\n\non job_ready(job) = job.is_ready\n  @@garbage\n", "g.policy")
    d = info.value.diagnostics[0]
    assert (d.span.line, d.span.col, d.message) == (4, 3, "unexpected indentation")
