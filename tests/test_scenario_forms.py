"""Every scenario form documented (docs/scenarios.md) and read alike by `fumarole check` and
`fumarole test`, and the hints for names only a one-line rule knows."""

from __future__ import annotations

import re
from pathlib import Path

from fumarole.runtime.authoring.scenario_keys import EXPECT_KEYS, HOOK_FIELDS, SCENARIO_KEYS
from helpers import checked

ROOT = Path(__file__).resolve().parent.parent
TWO_QUEUES = ROOT / "examples/two-queues"


def test_every_scenario_key_has_a_section_with_an_example():
    doc = (ROOT / "docs/scenarios.md").read_text()
    sections = re.split(r"^### ", doc, flags=re.MULTILINE)[1:]
    documented = {name: body for body in sections for name in re.findall(r"`(\w+)`", body.splitlines()[0])}
    for key in SCENARIO_KEYS - {"expect", "expectHooks"} | EXPECT_KEYS | set(HOOK_FIELDS):
        assert key in documented, f"docs/scenarios.md has no section for `{key}`"
        assert "```yaml" in documented[key] and key in documented[key].split("```yaml", 1)[1], key
    assert "## `expect`" in doc and "## `expectHooks`" in doc


def scenario(tmp_path: Path, bundle: Path) -> Path:
    path = tmp_path / "case.yaml"
    path.write_text(f"name: conf\nbundle: {bundle}\ncluster: {TWO_QUEUES / 'cluster.yaml'}\n"
                    "now: '2026-11-21T12:30:00Z'\nexpect:\n  evicted: [research/sweep-2, research/sweep-1]\n"
                    "  pipelined:\n    prod/serving: [node-1]\n")
    return path


def test_check_and_test_agree_on_a_conf_named_by_bundle(cli, tmp_path):
    case = scenario(tmp_path, TWO_QUEUES / "volcano-scheduler.conf")
    assert cli("check", str(case)).code == 0
    assert cli("test", str(case)).code == 0


def test_check_and_test_agree_on_a_broken_conf_named_by_bundle(cli, tmp_path):
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text('actions: "enqueue, allocate, reclam"\ntiers:\n- plugins:\n  - name: priority\n')
    case = scenario(tmp_path, conf)
    checked_out, tested = cli("check", str(case)), cli("test", str(case))
    assert checked_out.code != 0 and tested.code != 0
    assert "error[C020]" in checked_out.out and "error[C020]" in tested.out + tested.err
    assert f"{conf}:1:" in checked_out.out


def hints(source: str) -> list[tuple[str, str]]:
    return [(d.message, d.hint or "") for d in checked(source).diagnostics if d.code == "E100"]


def test_names_of_one_line_rules_get_a_hint_elsewhere():
    found = hints("plugin x\n\non reclaim_candidate(preemptor, task):\n"
                  "    return task.status == Running and self.queue != none\n")
    assert found[0] == ("unknown name 'Running'", "'Running' is a TaskStatus value: write the string \"Running\"; "
                        "a bare value is read only in one-line victim and candidate rules")
    assert found[1][0] == "unknown name 'self'" and "in a hook body use its parameter" in found[1][1]
    assert hints("plugin x\n\non job_order(l, r) = 1 if l.phase == Inqueue else 0\n")[0][1].startswith(
        "'Inqueue' is a PodGroupPhase value")


HDRF_TIER = ("actions: allocate\ntiers:\n- plugins:\n  - {name: drf, enableHierarchy: true}\n"
             "  - {name: proportion}\n")
HDRF_CLUSTER = """\
- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: '2', pods: '10'}}}
- apiVersion: scheduling.volcano.sh/v1beta1
  kind: Queue
  metadata:
    name: q1
    annotations: {volcano.sh/hierarchy: root/q1, volcano.sh/hierarchy-weights: 1/1}
  spec: {weight: 1}
  status: {state: Open}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: pg1, namespace: ns},
   spec: {queue: q1, minMember: 1}, status: {phase: Inqueue}}
- {apiVersion: v1, kind: Pod, metadata: {name: p1, namespace: ns, annotations: {scheduling.k8s.io/group-name: pg1}},
   spec: {containers: [{resources: {requests: {cpu: '1'}}}]}, status: {phase: Pending}}
"""


def test_an_inline_scheduler_is_the_tiers_a_session_opens_with_not_a_loaded_conf(cli, tmp_path):
    """Volcano's loader refuses proportion beside drf with enableHierarchy (C022), but OpenSession
    runs those tiers (hdrf_test.go TestHDRF): inline, the session runs; named as a file, it is refused."""
    inline = tmp_path / "inline.yaml"
    indented = "".join("  " + line + "\n" for line in HDRF_TIER.splitlines())
    objects = "".join("  " + line + "\n" for line in HDRF_CLUSTER.splitlines())
    inline.write_text(f"name: inline\nscheduler:\n{indented}objects:\n{objects}expect:\n  binds: {{ns/p1: n1}}\n")
    assert cli("check", str(inline)).code == 0
    result = cli("test", str(inline))
    assert result.code == 0 and "1 passed, 0 failed" in result.out, result.out + result.err
    (tmp_path / "volcano-scheduler.conf").write_text(HDRF_TIER)
    named = tmp_path / "named.yaml"
    named.write_text(f"name: named\nbundle: volcano-scheduler.conf\nobjects:\n{objects}expect:\n"
                     "  binds: {ns/p1: n1}\n")
    for command, code in (("check", 1), ("test", 2)):
        result = cli(command, str(named))
        assert result.code == code and "error[C022]: proportion and drf with enableHierarchy cannot share a tier" \
            in result.out + result.err, (command, result.out + result.err)
