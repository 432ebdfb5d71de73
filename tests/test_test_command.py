"""`fumarole test`: coverage per policy file, --threshold, json/junit output, and why a case failed."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from policy_lang.checker import check
from policy_lang.compiler import compile_module
from policy_lang.parser import parse

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "examples" / "site-min-runtime"
PROTECTED = SITE / "tests" / "young-tasks-are-protected.yaml"


@pytest.fixture
def wrong_expectation(tmp_path) -> Path:
    """The site example, expecting Volcano's victims: min_runtime protects one of them, so it fails."""
    text = PROTECTED.read_text().replace("bundle: ..", f"bundle: {SITE}") \
        .replace("cluster: ../../two-queues/cluster.yaml", f"cluster: {ROOT / 'examples/two-queues/cluster.yaml'}") \
        .replace("evicted: [research/sweep-1, research/sweep-0]", "evicted: [research/sweep-2, research/sweep-1]")
    path = tmp_path / "wrong.yaml"
    path.write_text(text)
    return path


def test_summary_stays_the_last_line(cli):
    result = cli("test", str(SITE / "tests"))
    assert result.code == 0 and result.out.splitlines()[-1] == "2 passed, 0 failed"


def test_coverage_reports_each_policy_file(cli):
    result = cli("test", "--coverage", str(SITE / "tests"))
    lines = result.out.splitlines()
    assert result.code == 0 and lines[-1] == "2 passed, 0 failed"
    table = {line.split()[0]: line.split()[1:] for line in lines if line.startswith("  ")}
    assert "examples/site-min-runtime/plugins/min_runtime.policy" in table
    assert "policies/volcano/actions/reclaim.policy" in table
    covered, branches = map(int, table["examples/site-min-runtime/plugins/min_runtime.policy"][0].split("/"))
    assert (covered, branches) == (2, 2)  # the guard was both true and false
    assert "total" in table
    assert not any("binpack.policy" in line for line in lines)  # no tier lists it: not counted


def test_coverage_verbose_names_branches_never_taken(cli):
    result = cli("test", "--coverage", "-v", str(SITE / "tests"))
    assert any("never true" in line or "never false" in line or "never reached" in line for line in result.out.splitlines())


def test_threshold(cli):
    low = cli("test", "--threshold", "5", str(SITE / "tests"))
    assert low.code == 0
    high = cli("test", "--threshold", "99.9", str(SITE / "tests"))
    assert high.code == 1
    assert "is below the threshold 99.9%" in high.out and high.out.splitlines()[-1] == "2 passed, 0 failed"


def test_json_format_with_coverage(cli):
    result = cli("test", "--coverage", "--format", "json", str(SITE / "tests"))
    doc = json.loads(result.out)
    assert doc["summary"] == {"passed": 2, "failed": 0}
    assert {c["name"] for c in doc["cases"]} == {"site-min-runtime/young-tasks-are-protected",
                                                "site-min-runtime/nothing-old-enough"}
    files = {f["file"]: f for f in doc["coverage"]["files"]}
    decisions = files["examples/site-min-runtime/plugins/min_runtime.policy"]["decisions"]
    assert decisions[0]["kind"] == "guard" and decisions[0]["true"] > 0 and decisions[0]["false"] > 0
    assert 0 < doc["coverage"]["total"]["percent"] <= 100


def test_junit_format(cli, wrong_expectation):
    result = cli("test", "--format", "junit", str(SITE / "tests"), str(wrong_expectation))
    assert result.code == 1
    suite = ET.fromstring(result.out).find("testsuite")
    assert suite.get("tests") == "3" and suite.get("failures") == "1"
    failure = next(c.find("failure") for c in suite.iter("testcase") if c.find("failure") is not None)
    assert "evicted: expected" in failure.get("message") and "min_runtime" in failure.text


def test_failure_names_the_rule_that_decided(cli, wrong_expectation):
    result = cli("test", str(wrong_expectation))
    assert result.code == 1
    out = result.out
    assert "research/sweep-2: expected to be evicted, but was not" in out
    assert "research/sweep-0: evicted, but not expected" in out
    excluded = [l for l in out.splitlines() if "min_runtime: excluded it at" in l]
    assert excluded and "min_runtime.policy:" in excluded[0]
    assert "`victim candidate when now - candidate.start_time >= min_runtime` was false" in excluded[0]
    assert any("min_runtime: selected it at" in l for l in out.splitlines())
    assert any("gang: selected it at policies/volcano/plugins/gang.policy:" in l for l in out.splitlines())
    assert out.splitlines()[-1] == "0 passed, 1 failed"


def test_probes_cost_nothing_when_off():
    """Without a probe the compiled code is exactly what it was: no calls, no names added."""
    from runtime.bundle import load_environment, standard_library
    from runtime.probes import Probes

    source = (SITE / "plugins" / "min_runtime.policy").read_text()
    checked = check(load_environment(), parse(source, "m.policy"), dict(standard_library().checked))
    plain = compile_module(checked).source
    assert "_probe" not in plain and "_pick" not in plain and "_iter" not in plain
    probes = Probes()
    instrumented = compile_module(checked, probes.site).source
    assert "_probe(" in instrumented and "_pick(" in instrumented and "_iter(" in instrumented
    assert [s.kind for s in probes.sites] == ["guard", "victim"]
