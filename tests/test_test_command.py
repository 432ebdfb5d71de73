"""`fumarole test`: coverage per policy file, --threshold, json/junit output, and why a case failed."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from fumarole.policy_lang.driver import check_module as check
from fumarole.policy_lang.driver import compile_checked
from fumarole.policy_lang.parser import parse

ROOT = Path(__file__).resolve().parent.parent
CLUSTER = ROOT / "examples" / "two-queues" / "cluster.yaml"

# A site bundle of our own (the examples change with the project): spare tasks younger than 3h.
GUARD = """plugin young_guard

arg min_runtime: duration = 10m from "minRuntime"

on reclaimable(reclaimer, candidates):
    for candidate in candidates:
        victim candidate when now - candidate.start_time >= min_runtime
"""
MANIFEST = """apiVersion: fumarole/v1
kind: PolicyBundle
metadata: {name: guard}
sources: [young_guard.policy]
actions: [enqueue, allocate, reclaim]
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}, {name: young_guard, arguments: {minRuntime: 3h}}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]
hooks:
  reclaimable: {combine: intersect-all}
"""
# At 12:30 research's pods have run 4.5h, 3.5h, 2.5h and 1.5h: only sweep-0 and sweep-1 may go.
CASE = """name: guard/{name}
bundle: ..
cluster: {cluster}
now: "2026-11-21T12:30:00Z"
expect:
  evicted: [{evicted}]
"""


@pytest.fixture
def site(tmp_path) -> Path:
    (tmp_path / "young_guard.policy").write_text(GUARD)
    (tmp_path / "bundle.yaml").write_text(MANIFEST)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "old-tasks-go.yaml").write_text(
        CASE.format(name="old-tasks-go", cluster=CLUSTER, evicted="research/sweep-1, research/sweep-0"))
    (tmp_path / "tests" / "no-young-task-goes.yaml").write_text(
        CASE.format(name="no-young-task-goes", cluster=CLUSTER, evicted="research/sweep-0, research/sweep-1"))
    return tmp_path


@pytest.fixture
def wrong_expectation(site) -> Path:
    """Expecting Volcano's own victims: the guard protects one of them, so the case fails."""
    path = site / "tests" / "wrong.yaml"
    path.write_text(CASE.format(name="wrong", cluster=CLUSTER, evicted="research/sweep-2, research/sweep-1"))
    return path


def test_summary_stays_the_last_line(cli, site):
    result = cli("test", str(site / "tests"))
    assert result.code == 0 and result.out.splitlines()[-1] == "2 passed, 0 failed"


def _coverage_table(out: str) -> dict[str, list[str]]:
    return {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.startswith("  ")}


def test_coverage_counts_the_bundles_own_files_by_default(cli, site):
    result = cli("test", "--coverage", str(site / "tests"))
    table = _coverage_table(result.out)
    assert result.code == 0
    assert [Path(name).resolve() for name in table if name != "total"] == [site / "young_guard.policy"]
    assert table["total"][0] == "2/2"


def test_readme_coverage_example_passes_on_the_site_bundle(cli, root):
    result = cli("test", "--coverage", "--threshold", "80", str(root / "examples" / "site-min-runtime" / "tests"))
    assert result.code == 0, result.out
    line = next(line for line in result.out.splitlines() if "min_runtime.policy" in line)
    assert line.split()[1:3] == ["0/0", "100.0%"] and "no branches: its rules ran" in line


def test_coverage_reports_each_policy_file(cli, site):
    result = cli("test", "--coverage", "--coverage-scope", "all", str(site / "tests"))
    lines = result.out.splitlines()
    assert result.code == 0 and lines[-1] == "2 passed, 0 failed"
    table = {line.split()[0]: line.split()[1:] for line in lines if line.startswith("  ")}
    guard = next(name for name in table if name.endswith("young_guard.policy"))
    assert "policies/volcano/actions/reclaim.policy" in table
    covered, branches = map(int, table[guard][0].split("/"))
    assert (covered, branches) == (2, 2)  # the guard was both true and false
    assert "total" in table
    assert not any("binpack.policy" in line for line in lines)  # no tier lists it: not counted


def test_coverage_verbose_names_branches_never_taken(cli, site):
    result = cli("test", "--coverage", "--coverage-scope", "all", "-v", str(site / "tests"))
    assert any("never true" in line or "never false" in line or "never reached" in line for line in result.out.splitlines())


def test_threshold(cli, site):
    low = cli("test", "--threshold", "5", "--coverage-scope", "all", str(site / "tests"))
    assert low.code == 0
    high = cli("test", "--threshold", "99.9", "--coverage-scope", "all", str(site / "tests"))
    assert high.code == 1
    assert "is below the threshold 99.9%" in high.out and high.out.splitlines()[-1] == "2 passed, 0 failed"


def test_json_format_with_coverage(cli, site):
    result = cli("test", "--coverage", "--format", "json", str(site / "tests"))
    doc = json.loads(result.out)
    assert doc["summary"] == {"passed": 2, "failed": 0}
    assert {c["name"] for c in doc["cases"]} == {"guard/old-tasks-go", "guard/no-young-task-goes"}
    files = {Path(f["file"]).name: f for f in doc["coverage"]["files"]}
    decisions = files["young_guard.policy"]["decisions"]
    assert decisions[0]["kind"] == "guard" and decisions[0]["true"] > 0 and decisions[0]["false"] > 0
    assert 0 < doc["coverage"]["total"]["percent"] <= 100


def test_junit_format(cli, site, wrong_expectation):
    result = cli("test", "--format", "junit", str(site / "tests"))
    assert result.code == 1
    suite = ET.fromstring(result.out).find("testsuite")
    assert suite.get("tests") == "3" and suite.get("failures") == "1"
    failure = next(c.find("failure") for c in suite.iter("testcase") if c.find("failure") is not None)
    assert "evicted: expected" in failure.get("message") and "young_guard" in failure.text


def test_failure_names_the_rule_that_decided(cli, wrong_expectation):
    result = cli("test", str(wrong_expectation))
    assert result.code == 1
    out = result.out
    assert "research/sweep-2: expected to be evicted, but was not" in out
    assert "research/sweep-0: evicted, but not expected" in out
    excluded = [l for l in out.splitlines() if "young_guard: excluded it at" in l]
    assert excluded and "young_guard.policy:7:" in excluded[0]
    assert "`victim candidate when now - candidate.start_time >= min_runtime` was false" in excluded[0]
    assert any("young_guard: selected it at" in l for l in out.splitlines())
    assert any("gang: selected it at policies/volcano/plugins/gang.policy:" in l for l in out.splitlines())
    assert out.splitlines()[-1] == "0 passed, 1 failed"


def test_probes_cost_nothing_when_off():
    """Without a probe the compiled code is exactly what it was: no calls, no names added."""
    from fumarole.runtime.authoring.probes import Probes
    from fumarole.runtime.bundles.environment import load_environment
    from fumarole.runtime.bundles.library import standard_library

    checked = check(load_environment(), parse(GUARD, "m.policy"), dict(standard_library().checked))
    plain = compile_checked(checked).source
    assert "_probe" not in plain and "_pick" not in plain and "_iter" not in plain
    probes = Probes()
    instrumented = compile_checked(checked, probes.site).source
    assert "_probe(" in instrumented and "_pick(" in instrumented and "_iter(" in instrumented
    assert [s.kind for s in probes.sites] == ["guard", "victim"]


def test_failure_names_the_plugin_that_ruled_a_candidate_out(cli, tmp_path):
    """A site policy that answers reclaim_candidate removes tasks before any victim hook sees them."""
    (tmp_path / "young_guard.policy").write_text(
        "plugin young_guard\n\narg min_runtime: duration = 10m from \"minRuntime\"\n\n"
        "on reclaim_candidate(reclaimer, task) = now - task.start_time >= min_runtime\n")
    (tmp_path / "bundle.yaml").write_text(MANIFEST.replace("hooks:\n  reclaimable: {combine: intersect-all}\n", ""))
    (tmp_path / "tests").mkdir()
    case = tmp_path / "tests" / "wrong.yaml"
    case.write_text(CASE.format(name="wrong", cluster=CLUSTER, evicted="research/sweep-2, research/sweep-1"))
    result = cli("test", str(case))
    assert result.code == 1
    ruled_out = [l for l in result.out.splitlines() if "young_guard: ruled it out at" in l]
    assert ruled_out and "young_guard.policy:5:" in ruled_out[0]
    assert "reclaim_candidate(prod/serving-" in ruled_out[0]
    assert "`now - task.start_time >= min_runtime` is false" in ruled_out[0]


BOTH = """name: both
description: a hook call and the session's decisions, each checked
scheduler:
  actions: allocate
  tiers:
  - plugins: [{name: predicates}]
objects:
- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: '2', memory: 1Gi, pods: '9'}}}
- apiVersion: v1
  kind: Pod
  metadata: {name: p1, namespace: ml, annotations: {scheduling.k8s.io/group-name: pg}}
  spec: {containers: [{resources: {requests: {cpu: '1'}}}]}
  status: {phase: Pending}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: pg, namespace: ml},
   spec: {queue: default, minMember: 1}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: default}, spec: {weight: 1}}
expect:
  binds: {ml/p1: BOUND_TO}
expectHooks:
- {hook: predicate, task: ml/p1, feasible: [n1]}
"""


def test_a_case_with_expect_and_expect_hooks_checks_both(cli, tmp_path):
    """The decisions of `expect` used to go unread beside `expectHooks`: a wrong bind passed."""
    (tmp_path / "right.yaml").write_text(BOTH.replace("BOUND_TO", "n1"))
    (tmp_path / "wrong.yaml").write_text(BOTH.replace("BOUND_TO", "n2"))
    (tmp_path / "hook.yaml").write_text(BOTH.replace("BOUND_TO", "n1").replace("feasible: [n1]", "feasible: []"))
    result = cli("test", str(tmp_path))
    assert result.code == 1
    failures = sorted(line for line in result.out.splitlines() if line.startswith("FAIL"))
    assert len(failures) == 2, result.out
    assert failures[0].endswith("hook.yaml:20): predicate(ml/p1): expected feasible [], got ['n1']")
    assert failures[1].endswith("wrong.yaml:18): binds: expected {ml/p1: n2}, got {ml/p1: n1}")
    assert result.out.splitlines()[-1] == "1 passed, 2 failed"
