"""The gang actions through `fumarole test`: why a victim was (not) taken, and a bundle's own rule for
`unified_evictable`."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
LATER_TIER = ROOT / "tests/conformance/cases/gangreclaim/authored-001-a-later-tier-is-not-asked-once-a-tier-decides.yaml"


def _case_expecting(tmp_path: Path, evicted: list[str]) -> Path:
    doc = yaml.safe_load(LATER_TIER.read_text())
    doc["expect"]["evicted"] = evicted
    path = tmp_path / "case.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_failure_explains_the_unified_evictable_answers(cli, tmp_path):
    result = cli("test", str(_case_expecting(tmp_path, ["ns/v2"])))
    assert result.code == 1
    lines = result.out.splitlines()
    assert "    ns/v1: evicted, but not expected" in lines
    assert "      unified_evictable(GangReclaim for ns/reclaimer, 2 candidates):" in lines
    assert any(l.startswith("        gang: selected it at policies/volcano/plugins/gang.policy:") for l in lines)
    assert not any("capacity:" in l for l in lines)  # the second tier is never asked
    assert lines[-1] == "0 passed, 1 failed"


BUNDLE = """apiVersion: fumarole/v1
kind: PolicyBundle
metadata: {name: veto}
uses: [volcano]
actions: [gangreclaim]
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: capacity}]
hooks:
  unified_evictable: {combine: intersect-all}
"""
CASE = """name: veto/capacity-in-a-later-tier-vetoes
bundle: ..
cluster: ../cluster.yaml
expect:
  evicted: [ns/v2]
  pipelined: {ns/reclaimer: [n1]}
"""


def test_a_bundle_can_make_every_unified_evictable_answer_a_veto(cli, tmp_path):
    """With intersect-all, capacity's answer in tier 2 counts: v1 (its queue at its guarantee) is spared."""
    doc = yaml.safe_load(LATER_TIER.read_text())
    (tmp_path / "bundle.yaml").write_text(BUNDLE)
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": doc["objects"]}))
    (tmp_path / "tests").mkdir()
    case = tmp_path / "tests" / "veto.yaml"
    case.write_text(CASE)
    result = cli("test", str(case))
    assert result.code == 0, result.out
    assert result.out.splitlines()[-1] == "1 passed, 0 failed"


def test_run_explains_gang_evictions_at_the_shared_library_line(cli, tmp_path):
    """Code of a module used through another module is reported at its own file (lib/gang_eviction.policy)."""
    doc = yaml.safe_load((ROOT / "tests/conformance/cases/gangpreempt/"
                          "authored-004-victims-accumulate-until-the-gang-fits.yaml").read_text())
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": doc["objects"]}))
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(yaml.safe_dump({"actions": "gangpreempt", "tiers": doc["scheduler"]["tiers"]}))
    result = cli("run", str(cluster), "--config", str(conf), "--explain")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    evicted = [l for l in lines if "gangpreempt evicted it to make room for ns/preemptor-0" in l]
    assert evicted and "`plan.evict(victim, reason)`  [policies/volcano/lib/gang_eviction.policy:" in evicted[0]
    assert "      victims chosen by unified_evictable(GangPreempt for ns/preemptor, 2 candidates)" in lines
