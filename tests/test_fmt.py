"""`fumarole fmt`: canonical, idempotent, never changes meaning, keeps every comment."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fumarole.policy_lang.driver import check_module as check
from fumarole.policy_lang.driver import compile_checked
from fumarole.policy_lang.fmt import WIDTH, format_source, same_tree
from fumarole.policy_lang.layout import scan
from fumarole.policy_lang.parser import parse

ROOT = Path(__file__).resolve().parent.parent
OWN = sorted((ROOT / "policies").rglob("*.policy")) + sorted((ROOT / "examples").rglob("*.policy"))

TORTURE = '''# leading file comment

plugin   torture   # header comment
use framework
arg w: int = -1 from "tor\\"ture.w"   # arg comment
arg zones: map[string, string] from prefix "tdm.zone."
arg spans: map[string, string] from containing "tdm.span."
state seen: map[Task,int]
let LIMIT=3



# comment before def
def f(a: int, b: int) -> int:
    # first in body
    let x = a+b*2   # trailing
    if x > 1 and (a == 2 or b == 3):   # if header
        x = x - (a - b)
        # end of if body
    # before elif
    elif x < -1:
        x = -(-x)
    else:
        pass
    # end of f
    return x if x > 0 else (0 if x == 0 else -x)
def g(q: list[int]) -> map[int, int] =
    {k: k*2 for k in q if k % 2 == 0}
on job_order(job):
    order by job.priority desc, job.uid asc
on predicate(task, node):
    fail "too many" when node.max_task_num <= \\
        node.pod_count
    let cmp = fn(l: Task, r: Task) => l.priority > r.priority
    let xs = [1, 2,
        # inside a list
        3]
    for t in [t for t in node.tasks if not (t.status == "Running")]:
        continue when t.job == none
        seen[t] = len(xs) + LIMIT + w
    let d = 1h30m
    while false:
        break
# trailing file comment
'''


def compiled_program(source: str, file: str) -> str:
    """The generated Python of a policy, with source positions (loop-limit messages) blanked out."""
    from fumarole.runtime.bundles.environment import load_environment
    from fumarole.runtime.bundles.library import standard_library

    checked = check(load_environment(), parse(source, file), dict(standard_library().checked))
    assert checked.ok, [d.headline() for d in checked.diagnostics if d.severity == "error"]
    return re.sub(r"_loop_limit\(\d+, \d+\)", "_loop_limit(L, C)", compile_checked(checked).source)


def comments(source: str) -> list[str]:
    return [c.text for c in scan(source).comments]


@pytest.mark.parametrize("path", OWN, ids=[str(p.relative_to(ROOT)) for p in OWN])
def test_own_policies_are_formatted(path):
    source = path.read_text()
    assert format_source(source, str(path)) == source, f"run: fumarole fmt {path.relative_to(ROOT)}"


@pytest.mark.parametrize("path", OWN, ids=[str(p.relative_to(ROOT)) for p in OWN])
def test_formatting_never_changes_the_compiled_program(path):
    source = path.read_text()
    # format a deliberately mangled copy: spacing, blank lines and comments all over the place
    mangled = re.sub(r"(?<=\w) (=|==|\+|-) (?=\w)", r"\1", source).replace("\n\n", "\n\n\n\n")
    mangled = re.sub(r"^(\s*)(let|return) ", r"\1# a comment\n\1\2 ", mangled, count=3, flags=re.MULTILINE)
    if not same_tree(parse(mangled, "m"), parse(source, "s")):
        mangled = source
    formatted = format_source(mangled, str(path))
    assert compiled_program(formatted, str(path)) == compiled_program(source, str(path))


def test_torture_file_is_idempotent_and_keeps_meaning_and_comments():
    once = format_source(TORTURE)
    assert format_source(once) == once
    assert same_tree(parse(once), parse(TORTURE))
    assert compiled_program(once, "t.policy") == compiled_program(TORTURE, "t.policy")
    assert sorted(comments(once)) == sorted(comments(TORTURE))


def test_canonical_layout():
    once = format_source(TORTURE)
    lines = once.splitlines()
    assert lines[:3] == ["# leading file comment", "", "plugin torture  # header comment"]
    assert 'arg w: int = -1 from "tor\\"ture.w"  # arg comment' in lines
    assert "state seen: map[Task, int]" in lines
    assert "    let x = a + b * 2  # trailing" in lines
    assert "    if x > 1 and (a == 2 or b == 3):  # if header" in lines
    assert lines.count("") <= once.count("\n\n") + 1
    assert "\n\n\n\n" not in once  # at most two blank lines
    # comments stay where they were: inside the block, before elif, at the end of the function
    assert once.index("        # end of if body") < once.index("    # before elif") < once.index("    elif x < -1:")
    assert "    # inside a list\n    let xs = [1, 2, 3]" in once  # a comment inside an expression moves above it
    assert "def g(q: list[int]) -> map[int, int] = {k: k * 2 for k in q if k % 2 == 0}" in lines
    assert "    order by job.priority desc, job.uid" in lines
    assert "    fail \"too many\" when node.max_task_num <= node.pod_count" in lines
    assert "    for t in [t for t in node.tasks if not (t.status == \"Running\")]:" in lines
    assert once.endswith("# trailing file comment\n")
    assert all(len(line) <= WIDTH for line in lines)


def test_long_lines_break_inside_brackets():
    name = "x" * 40
    source = (f"plugin p\n\non job_ready(job):\n    return job.count(\"{name}\") > 0 and job.count(\"{name}\") > 1 "
              f"and job.is_ready  # why\n")
    once = format_source(source)
    assert once.splitlines()[3:] == [
        "    # why",
        "    return (",
        f"        job.count(\"{name}\") > 0",
        f"        and job.count(\"{name}\") > 1",
        "        and job.is_ready",
        "    )",
    ]
    assert format_source(once) == once and same_tree(parse(once), parse(source))
    call = f"plugin p\n\non open:\n    let s = [\"{name}\", \"{name}\", \"{name}\"]\n"
    assert format_source(call).splitlines()[3:] == [
        "    let s = [", f"        \"{name}\",", f"        \"{name}\",", f"        \"{name}\",", "    ]"]


def test_parentheses_that_carry_meaning_stay():
    source = "plugin p\n\non open:\n    let a = 1 - (2 - 3)\n    let b = (1 + 2) * 3\n    let c = -(-1)\n"
    once = format_source(source)
    assert "let a = 1 - (2 - 3)" in once and "let b = (1 + 2) * 3" in once and "let c = -(-1)" in once
    assert same_tree(parse(once), parse(source))


def test_syntax_error_is_not_formatted():
    from fumarole.policy_lang.diagnostics import FumaroleError

    with pytest.raises(FumaroleError) as err:
        format_source("plugin p\n\non open:\n    let = 1\n", "bad.policy")
    assert err.value.diagnostics[0].code == "P001"


# -- the command ----------------------------------------------------------------------------------

UGLY = "plugin p\n\non open:\n    let a=1   # note\n"
PRETTY = "plugin p\n\non open:\n    let a = 1  # note\n"


def test_fmt_check_names_files_and_exits_1(cli, tmp_path):
    (tmp_path / "ugly.policy").write_text(UGLY)
    (tmp_path / "pretty.policy").write_text(PRETTY)
    result = cli("fmt", "--check", str(tmp_path))
    assert result.code == 1
    assert result.out.splitlines() == [f"would reformat {tmp_path / 'ugly.policy'}"]
    assert (tmp_path / "ugly.policy").read_text() == UGLY


def test_fmt_diff_prints_and_changes_nothing(cli, tmp_path):
    (tmp_path / "ugly.policy").write_text(UGLY)
    result = cli("fmt", "--diff", str(tmp_path / "ugly.policy"))
    assert result.code == 0
    assert "-    let a=1   # note" in result.out and "+    let a = 1  # note" in result.out
    assert (tmp_path / "ugly.policy").read_text() == UGLY


def test_fmt_rewrites_in_place(cli, tmp_path):
    (tmp_path / "ugly.policy").write_text(UGLY)
    assert cli("fmt", str(tmp_path)).code == 0
    assert (tmp_path / "ugly.policy").read_text() == PRETTY
    assert cli("fmt", "--check", str(tmp_path)).code == 0


def test_fmt_on_a_syntax_error_exits_2_without_traceback(cli, tmp_path):
    (tmp_path / "bad.policy").write_text("plugin p\n\non open:\n    let = 1\n")
    result = cli("fmt", "--check", str(tmp_path))
    assert result.code == 2 and "error[P001]" in result.err and "Traceback" not in result.err


def test_fmt_check_passes_on_the_project(cli):
    result = cli("fmt", "--check", str(ROOT / "policies"), str(ROOT / "examples"))
    assert result.code == 0, result.out


def test_fmt_rejects_other_files(cli, tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    assert cli("fmt", str(tmp_path / "notes.txt")).code == 2
    assert cli("fmt", str(tmp_path / "missing.policy")).code == 2
