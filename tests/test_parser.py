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


# -- literals and nesting the grammar accepts but that mean nothing (issue 8, section 2) ----------------------

def _first_diagnostic(source: str) -> tuple[str, int, int, str]:
    with pytest.raises(FumaroleError) as err:
        parse(source, "t.policy")
    d = err.value.diagnostics[0]
    return d.code, d.span.line, d.span.col, d.message


@pytest.mark.parametrize("literal, col, message", [
    (r'"\x"', 10, r"\x needs exactly 2 hexadecimal digits"),
    (r'"ab\x4"', 12, r"\x needs exactly 2 hexadecimal digits"),
    (r'"\N{NOPE}"', 10, r"unknown character name 'NOPE' in \N{...}"),
    (r'"\N"', 10, r"\N needs a character name in braces, e.g. \N{BULLET}"),
    (r'"\u12"', 10, r"\u needs exactly 4 hexadecimal digits"),
    (r'"\ud800"', 10, "U+D800 is a surrogate, not a character"),
    (r'"\udfff\ud800"', 10, "U+DFFF is a surrogate, not a character"),
    (r'"\U00110000"', 10, "U+110000 is beyond the last Unicode character U+10FFFF"),
    (r'"a\q"', 11, r"unknown escape \q"),
])
def test_bad_string_escapes_are_diagnostics_at_the_backslash(literal, col, message):
    assert _first_diagnostic(f"plugin p\n\nlet a = {literal}\n") == ("P003", 3, col, message)


@pytest.mark.parametrize("literal, value", [
    ('"zone-é"', "zone-é"), ('"日本"', "日本"), (r'"\u00e9\x41\U0001F600\N{BULLET}"', "éA\U0001F600•"),
    (r'"a\"b\\c\n\t"', 'a"b\\c\n\t'),
])
def test_string_literals_keep_their_text(literal, value):
    assert parse(f"plugin p\n\nlet a = {literal}\n").decls[0].value.value == value


@pytest.mark.parametrize("literal, message", [
    ("9" * 4000, "integer literal out of range (the largest is 9223372036854775807)"),
    ("9223372036854775808", "integer literal out of range (the largest is 9223372036854775807)"),
    ("1e400", "number literal out of range (larger than the largest float, 1.8e308)"),
    ("1" * 400 + ".5", "number literal out of range (larger than the largest float, 1.8e308)"),
    ("9" * 400 + "h", "number literal out of range (larger than the largest float, 1.8e308)"),
])
def test_numbers_out_of_range_are_diagnostics(literal, message):
    assert _first_diagnostic(f"plugin p\n\nlet a = {literal}\n") == ("P004", 3, 9, message)


def test_the_largest_int_is_fine():
    assert parse("plugin p\n\nlet a = 9223372036854775807\n").decls[0].value.value == 2**63 - 1


@pytest.mark.parametrize("expr", ["- " * 1000 + "1", "not " * 1000 + "true", "not " * 250 + "true",
                                  " + ".join(["1"] * 400), "[" * 1000 + "1" + "]" * 1000,
                                  "f(" * 1000 + "1" + ")" * 1000, "a." * 1000 + "b"])
def test_deep_nesting_is_a_diagnostic_not_a_recursion_error(expr):
    code, line, col, message = _first_diagnostic(f"plugin p\n\nlet a = {expr}\n")
    assert (code, line, message) == ("P005", 3, "this nests more than 200 levels deep") and col >= 9


def test_deep_blocks_are_a_diagnostic():
    lines = ["plugin p", "", "on open:"] + ["    " * (i + 1) + "if true:" for i in range(150)] + ["    " * 151 + "pass"]
    code, _line, _col, _message = _first_diagnostic("\n".join(lines) + "\n")
    assert code == "P005"


def test_deep_parentheses_need_no_nesting():
    assert parse("plugin p\n\nlet a = " + "(" * 1000 + "1" + ")" * 1000 + "\n").decls[0].value.value == 1
