"""`check` stays fast on any input: recursion by components, bounded hints, capped sizes.

Each test here was minutes (or gigabytes) before: every call cycle was enumerated, each unknown
name compared with every name of the module, and any literal lexed however long.
"""

from __future__ import annotations

import itertools
import threading
import time

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fumarole.policy_lang.check_core import MAX_HINTS
from fumarole.policy_lang.diagnostics import HINT_CANDIDATES, FumaroleError, did_you_mean
from fumarole.policy_lang.parser import MAX_FILE_CHARS, MAX_LINE_CHARS, parse
from tests.helpers import checked

# CPU seconds of this process (time.process_time), not wall time: other work on a busy machine does not
# count against the bound.  "Well under a second"; the broken checker took minutes.
SECONDS = 1.0


def _defs(calls: dict[int, list[int]]) -> str:
    body = "".join(f"def f{i}(x: int) -> int = " + (" + ".join(f"f{j}(x)" for j in callees) or "x") + "\n"
                   for i, callees in calls.items())
    return "plugin p\n\n" + body + "\non job_order(a, b) = " + " + ".join(f"f{i}(1)" for i in calls) + "\n"


def _timed_check(source: str):
    checked("plugin warm\n")  # the parser's tables and the standard library are not what is measured
    start = time.process_time()
    result = checked(source)
    return result, time.process_time() - start


@pytest.mark.parametrize("calls", [
    {i: [j for j in range(10) if j != i] for i in range(10)},  # ten definitions all calling each other
    {i: [(i + 1) % 50, (i + 7) % 50] for i in range(50)},      # fifty in a ring with chords
])
def test_mutually_calling_definitions_give_one_e132_quickly(calls):
    result, seconds = _timed_check(_defs(calls))
    [diag] = [d for d in result.diagnostics if d.severity == "error"]
    assert (diag.code, diag.span.line, diag.span.col) == ("E132", 3, 5)
    assert diag.message.startswith("recursion is not allowed: f0 -> ")
    assert diag.message.endswith(f"-> f0 (and {len(calls) - diag.message.count(' -> ')} more definitions "
                                 "calling each other)")
    assert seconds < SECONDS


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 14).flatmap(lambda n: st.fixed_dictionaries(
    {i: st.lists(st.integers(0, n - 1), max_size=4, unique=True) for i in range(n)})))
def test_one_e132_per_group_of_definitions_calling_each_other(calls):
    graph = nx.DiGraph([(i, j) for i, callees in calls.items() for j in callees])
    graph.add_nodes_from(calls)
    groups = [sorted(g) for g in nx.strongly_connected_components(graph)
              if len(g) > 1 or graph.has_edge(next(iter(g)), next(iter(g)))]
    result, seconds = _timed_check(_defs(calls))
    order = list(calls)
    firsts = [min(f"f{i}" for i in g) for g in groups]
    found = sorted((d.span.line, d.message.split(": ", 1)[1].split(" -> ")[0])
                   for d in result.diagnostics if d.code == "E132")
    assert found == sorted((3 + order.index(int(name[1:])), name) for name in firsts)
    assert len(found) == len(groups)
    assert seconds < SECONDS


def test_hints_are_bounded_per_module_and_per_name():
    """Thousands of unknown names among thousands of names: every one is an E100, the first
    MAX_HINTS of them with a hint, and no hint reads more than HINT_CANDIDATES names."""
    names = "".join(f"let c{i} = {i}\n" for i in range(3000))
    uses = "".join(f"    let v{i} = cx{i}\n" for i in range(1000))
    result, seconds = _timed_check("module m\n\n" + names + "\ndef f() -> int:\n" + uses + "    return 0\n")
    unknown = [d for d in result.diagnostics if d.code == "E100"]
    assert len(unknown) == 1000 and unknown[0].span.line == 3005
    assert [d.hint for d in unknown[:3]] == ["did you mean 'c0'?", "did you mean 'c1'?", "did you mean 'c2'?"]
    assert sum(d.hint is not None for d in unknown) == MAX_HINTS
    assert seconds < 20 * SECONDS  # parsing 70 KB dominates; the unbounded hints took minutes

    read = itertools.count()
    candidates = (f"name{next(read)}" for _ in itertools.repeat(None))  # endless
    assert did_you_mean("name7", candidates) == "did you mean 'name7'?"
    assert next(read) == HINT_CANDIDATES
    assert did_you_mean("x" * 65 + "y", ["x" * 65 + "z"]) is None  # longer than HINT_NAME_LENGTH


@pytest.mark.parametrize("source, line, col, message", [
    ('plugin p\n\nlet S = "' + "a" * 7_000_000 + '"\n', 1, 1,
     f"this file has 7,000,021 characters; a policy file may have at most {MAX_FILE_CHARS:,}"),
    ('plugin p\n\nlet S = "' + "a" * MAX_LINE_CHARS + '"\n', 3, MAX_LINE_CHARS + 1,
     f"this line has {MAX_LINE_CHARS + 10:,} characters; a line (and so a string literal) may have at most "
     f"{MAX_LINE_CHARS:,}"),
    ("plugin p\n\n# " + "x" * 9000 + "\n", 3, MAX_LINE_CHARS + 1,
     f"this line has 9,002 characters; a line (and so a string literal) may have at most {MAX_LINE_CHARS:,}"),
])
def test_huge_files_and_lines_are_refused_quickly(source, line, col, message):
    parse("plugin warm\n")
    start = time.process_time()
    with pytest.raises(FumaroleError) as err:
        parse(source, "big.policy")
    assert time.process_time() - start < SECONDS
    [diag] = err.value.diagnostics
    assert (diag.code, diag.file, diag.span.line, diag.span.col, diag.message) == ("P007", "big.policy", line, col,
                                                                                    message)


def test_the_longest_line_allowed_parses():
    literal = "a" * (MAX_LINE_CHARS - len('let S = ""'))
    assert parse(f'plugin p\n\nlet S = "{literal}"\n').decls[0].value.value == literal


def test_a_cancelled_check_stops_at_its_next_checkpoint():
    """The language server cancels the check of text a newer edit replaced: the checker stops
    within CHECKPOINT_EVERY expressions, with Cancelled (which no `except Exception` swallows)."""
    from fumarole.policy_lang.cancel import Cancelled, run_cancellable
    from fumarole.policy_lang.driver import check_module as check
    from fumarole.runtime.bundles.environment import load_environment

    lines = "".join(f"    let v{i} = {i} * 2 - (3 + {i})\n" for i in range(300))
    module = parse("plugin p\n\non open:\n" + lines)
    stop = threading.Event()
    assert run_cancellable(stop, check, load_environment(), module, {}).ok
    stop.set()
    with pytest.raises(Cancelled):
        run_cancellable(stop, check, load_environment(), module, {})
    assert not issubclass(Cancelled, Exception)
    assert check(load_environment(), module, {}).ok  # outside run_cancellable nothing is cancelled


def test_a_cancelled_parse_stops_within_a_thousand_tokens_and_frees_the_parser():
    """A 1 MiB policy takes seconds to parse; an editor's newer edit cancels it mid-parse (the
    indenter is a checkpoint every TOKENS_PER_CHECKPOINT tokens) and the next parse runs."""
    from fumarole.policy_lang.cancel import Cancelled, run_cancellable
    from fumarole.policy_lang.parser import TOKENS_PER_CHECKPOINT

    source = "plugin p\n\non open:\n" + "".join(f"    let v{i} = {i} * 2\n" for i in range(TOKENS_PER_CHECKPOINT))
    stop = threading.Event()
    stop.set()
    with pytest.raises(Cancelled):
        run_cancellable(stop, parse, source)
    short = "plugin p\n\non open:\n    let v = 1\n"
    assert run_cancellable(stop, parse, short).name == "p"  # fewer tokens than a checkpoint: done
    assert len(parse(source).decls) == 1  # the parser was left usable
