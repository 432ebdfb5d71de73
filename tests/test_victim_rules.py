"""One-line victim rules (`victim when COND`, bare candidate conditions): sugar that decides exactly
what the loop it stands for decides, checked as strictly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fumarole.policy_lang import ast as A
from fumarole.policy_lang.fmt import expr_text, format_source

from tests.helpers import checked

ROOT = Path(__file__).resolve().parent.parent
TWO_QUEUES = ROOT / "examples" / "two-queues" / "cluster.yaml"

BRIEF = "victim when status == Running and queue != self.queue and queue.reclaimable"
LOOP = """for c in candidates:
        let q = c.queue
        victim c when c.status == "Running" and q != none and q != reclaimer.queue and q.reclaimable"""
MANIFEST = """apiVersion: fumarole/v1
kind: PolicyBundle
metadata: {name: site}
sources: [site.policy]
actions: [enqueue, allocate, reclaim]
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}, {name: site}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]
"""


def _policy(body: str, hook: str = "on reclaimable(reclaimer, candidates):") -> str:
    return f"plugin site\n\n{hook}\n    {body}\n"


def _evictions(cli, tmp_path: Path, name: str, policy: str) -> list[str]:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "site.policy").write_text(policy)
    (folder / "bundle.yaml").write_text(MANIFEST)
    result = cli("run", str(TWO_QUEUES), "--bundle", str(folder), "-o", "json")
    assert result.code == 0, result.err
    return json.loads(result.out)["evicted"]


def test_the_brief_line_verbatim_decides_what_the_explicit_loop_decides(cli, tmp_path):
    assert checked(_policy(BRIEF)).ok
    sugar = _evictions(cli, tmp_path, "sugar", _policy(BRIEF))
    loop = _evictions(cli, tmp_path, "loop", _policy(LOOP))
    assert sugar == loop and sugar


def test_a_narrower_rule_changes_the_two_queue_evictions_accordingly(cli, tmp_path):
    brief = _evictions(cli, tmp_path, "brief", _policy(BRIEF))
    narrower = _evictions(cli, tmp_path, "sugar", _policy(BRIEF + ' and name != "sweep-2"'))
    loop = _evictions(cli, tmp_path, "loop", _policy(LOOP + ' and c.name != "sweep-2"'))
    assert "research/sweep-2" in brief
    assert narrower == loop and narrower and "research/sweep-2" not in narrower


def test_several_rules_mean_any_of_them_and_choose_a_candidate_once(cli, tmp_path):
    two = _policy('victim when name == "sweep-1"\n    victim when name == "sweep-1" or name == "sweep-0"')
    assert _evictions(cli, tmp_path, "two", two) == ["research/sweep-1", "research/sweep-0"]


def test_the_rule_expands_to_one_loop_with_explicit_none_checks():
    module = checked(_policy(BRIEF)).module
    (loop,) = module.decls[0].body
    assert isinstance(loop, A.For) and loop.var == "candidate" and loop.iter.id == "candidates"
    assert expr_text(loop.body[0].cond) == (
        'candidate.status == "Running" and (candidate.queue != none and candidate.queue != reclaimer.queue) '
        'and candidate.queue.reclaimable')


@pytest.mark.parametrize("hook", [
    "on preemptable(preemptor, candidates):",
    "on reclaimable(reclaimer, candidates):",
    "on preemptable, reclaimable(actor, candidates):",
])
def test_victims_hooks_accept_the_rule(hook):
    result = checked(_policy("victim when status == Running and job.priority < self.job.priority", hook))
    assert result.ok, [d.headline() for d in result.diagnostics]


def test_victim_tasks_has_no_self():
    assert checked(_policy("victim when preemptable and status == Running", "on victim_tasks(tasks):")).ok
    result = checked(_policy("victim when priority < self.priority", "on victim_tasks(tasks):"))
    assert [(d.code, d.span.line, d.span.col) for d in result.diagnostics] == [("E160", 4, 28)]


@pytest.mark.parametrize("body", [
    "= status == Running and queue != self.queue",
    ":\n    victim when status == Running\n    victim when candidate.priority < self.priority",
])
@pytest.mark.parametrize("hook", ["preempt_candidate", "reclaim_candidate"])
def test_candidate_hooks_accept_a_bare_condition_and_rules(hook, body):
    result = checked(f"plugin site\n\non {hook}(preemptor, task) {body}\n")
    assert result.ok, [d.headline() for d in result.diagnostics]


def test_a_misspelt_enum_value_is_e141_with_did_you_mean():
    result = checked(_policy("victim when status == Runing"))
    (d,) = result.diagnostics
    assert (d.code, d.span.line, d.span.col, d.hint) == ("E141", 4, 27, "did you mean 'Running'?")


def test_a_misspelt_attribute_is_e101_with_did_you_mean():
    result = checked(_policy("victim when staus == Running"))
    codes = [(d.code, d.span.line, d.span.col) for d in result.diagnostics]
    assert ("E101", 4, 17) in codes
    assert any("status" in (d.hint or "") for d in result.diagnostics if d.code == "E101")


def test_a_name_both_declared_and_a_candidate_attribute_is_an_error_never_a_choice():
    source = "plugin site\n\narg priority: int = 5\n\non reclaimable(reclaimer, candidates):\n" \
             "    victim when priority < 3\n"
    (d,) = checked(source).diagnostics
    assert (d.code, d.span.line, d.span.col) == ("E160", 6, 17)
    assert "'priority' is both the candidate's attribute 'priority' and the argument declared at line 3" in d.message


def test_a_rule_inside_a_block_or_without_a_condition_is_out_of_place():
    nested = checked(_policy("if true:\n        victim when status == Running"))
    bare = checked(_policy("victim"))
    assert [d.code for d in nested.diagnostics] == ["E161"] and [d.code for d in bare.diagnostics] == ["E161"]
    elsewhere = checked(_policy("victim when true", "on job_valid(job):"))
    assert [d.code for d in elsewhere.diagnostics] == ["E161"]


def test_fmt_keeps_the_one_line_form():
    source = _policy(BRIEF)
    assert format_source(source) == source


def test_a_candidate_without_a_queue_is_never_chosen():
    """`queue != self.queue` alone would hold for a task whose queue is none; the rule makes it false."""
    module = checked(_policy("victim when queue != self.queue")).module
    cond = module.decls[0].body[0].body[0].cond
    assert expr_text(cond) == "candidate.queue != none and candidate.queue != reclaimer.queue"


# -- garbage in a rule condition: a diagnostic with a position, never a crash ----------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_ATOMS = st.sampled_from(["status", "queue", "job", "self", "candidate", "name", "priority", "Running", "Runing",
                          "none", "true", "1e400", "99999999999999999999999", '"\\x"', "queue.reclaimable",
                          "job.priority", "self.job.priority", "staus", "preemptable", "(", ")", "[", "]"])
_OPS = st.sampled_from([" == ", " != ", " < ", " and ", " or ", " in ", " not in ", " not ", " + ", "."])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_ATOMS, _OPS), min_size=1, max_size=12), st.sampled_from([
    "on reclaimable(reclaimer, candidates):", "on victim_tasks(tasks):", "on job_valid(job):",
    "on reclaim_candidate(reclaimer, task):"]))
def test_any_rule_condition_ends_in_a_clean_check_or_positioned_diagnostics(parts, hook):
    from fumarole.policy_lang.diagnostics import FumaroleError
    from fumarole.policy_lang.parser import parse

    condition = "".join(atom + op for atom, op in parts).rstrip(" .+=<!andortin")
    source = _policy(f"victim when {condition}", hook)
    try:
        parse(source, "fuzz.policy")
    except FumaroleError as err:
        assert all(d.positioned and d.file == "fuzz.policy" for d in err.diagnostics)
        return
    result = checked(source, "fuzz.policy")
    assert all(d.positioned and d.file == "fuzz.policy" for d in result.diagnostics)
