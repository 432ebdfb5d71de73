"""Site victim policies, whole: the victim order hook, the veto combination, one candidate rule
in every evicting action, and rules that see the evictions already chosen (docs/hooks.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fumarole.runtime.framework import dispatch as C
from tests.helpers import checked

ROOT = Path(__file__).resolve().parent.parent
TWO_QUEUES = ROOT / "examples" / "two-queues" / "cluster.yaml"
VOLCANO_TIERS = [["priority", "gang", "conformance"], ["drf", "predicates", "proportion", "nodeorder"]]


def bundle(tmp_path: Path, policy: str, tiers: list[list[str]], actions: str = "enqueue, allocate, reclaim",
           hooks: str = "", name: str = "b") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "site.policy").write_text(policy)
    lines = ["apiVersion: fumarole/v1", "kind: PolicyBundle", f"metadata: {{name: {name}}}", "uses: [volcano]",
             "sources: [site.policy]", f"actions: [{actions}]", "tiers:"]
    lines += ["- plugins: [" + ", ".join(f"{{name: {p}}}" for p in tier) + "]" for tier in tiers]
    (folder / "bundle.yaml").write_text("\n".join(lines) + "\n" + hooks)
    return folder


def run(cli, cluster: Path, folder: Path | None, *extra: str, engine: str = "fast") -> dict:
    config = ["--bundle", str(folder)] if folder else ["--config", str(ROOT / "examples/two-queues/volcano-scheduler.conf")]
    result = cli("run", str(cluster), *config, "-o", "json", "--engine", engine, *extra)
    assert result.code == 0, result.err
    return json.loads(result.out)


def with_site(tier: int, plugin: str = "site") -> list[list[str]]:
    tiers = [list(t) for t in VOLCANO_TIERS]
    tiers[tier].append(plugin)
    return tiers


# -- victim_order ---------------------------------------------------------------------------------

OLDEST_FIRST = "plugin site\n\non victim_order(task):\n    order by start_time\n"


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_victim_order_decides_before_volcanos_order_in_either_tier(cli, tmp_path, engine):
    """Volcano's reverse task order evicts sweep-2 then sweep-1; oldest first, whatever the tier."""
    volcano = run(cli, TWO_QUEUES, None, engine=engine)
    assert volcano["evicted"] == ["research/sweep-2", "research/sweep-1"]
    for tier in (0, 1):
        got = run(cli, TWO_QUEUES, bundle(tmp_path, OLDEST_FIRST, with_site(tier), name=f"t{tier}"), engine=engine)
        assert got["evicted"] == ["research/sweep-0", "research/sweep-1"], f"listed in tier {tier + 1}"
        assert got["pipelined"] == volcano["pipelined"]


def test_a_victim_order_that_never_decides_keeps_volcanos_order(cli, tmp_path):
    same = "plugin site\n\non victim_order(task):\n    order by namespace\n"
    got = run(cli, TWO_QUEUES, bundle(tmp_path, same, with_site(1)))
    assert got["evicted"] == ["research/sweep-2", "research/sweep-1"]


def test_victim_order_is_never_asked_by_allocate_or_backfill(cli, tmp_path):
    """A victim order that would reverse every order changes no placement."""
    policy = "plugin site\n\non victim_order(task):\n    order by start_time desc\n"
    actions = "enqueue, allocate, backfill"
    volcano = bundle(tmp_path, "plugin site\n", VOLCANO_TIERS + [["site"]], actions, name="plain")
    site = bundle(tmp_path, policy, with_site(0), actions, name="site")
    cluster = ROOT / "examples" / "cluster.yaml"
    assert run(cli, cluster, site)["binds"] == run(cli, cluster, volcano)["binds"]


def test_the_key_form_reads_a_bare_name_as_the_tasks_attribute():
    assert checked(OLDEST_FIRST).ok
    bad = checked("plugin site\n\non victim_order(task):\n    order by staus\n")
    (d,) = bad.diagnostics
    assert (d.code, d.span.line, d.span.col) == ("E101", 4, 14) and "status" in d.hint


# -- veto -----------------------------------------------------------------------------------------

def _plugin(answer):
    """A victims-hook plugin function answering `answer(candidates)` (None: abstain)."""
    def fn(actor, candidates):
        chosen = answer(list(candidates))
        return (chosen, 0) if chosen is None else (chosen, 1)
    return fn


def _fixed(names):
    return _plugin(lambda cs: [c for c in cs if c in names])


ABSTAIN = _plugin(lambda cs: None)
tasks = st.lists(st.sampled_from("abcdef"), unique=True, max_size=6)
answers = st.one_of(st.none(), tasks)


def _as_plugin(answer):
    return ABSTAIN if answer is None else _fixed(set(answer))


@settings(max_examples=150, deadline=None)
@given(candidates=tasks, deciders=st.lists(st.lists(answers, max_size=3), max_size=3), vetoes=st.lists(answers, max_size=3))
def test_veto_keeps_volcanos_choice_and_only_removes(candidates, deciders, vetoes):
    tiers = [[_as_plugin(a) for a in tier] for tier in deciders]
    volcano = C.intersect(tiers)(None, candidates)
    got = C.veto(tiers, [_as_plugin(a) for a in vetoes])(None, candidates)
    allowed = set(volcano)
    for answer in vetoes:
        if answer is not None:
            allowed &= set(answer)
    assert got == [c for c in volcano if c in allowed]
    assert C.veto(tiers, [])(None, candidates) == volcano


def test_veto_is_what_intersect_cannot_be(cli, tmp_path):
    """Listed in tier 2 under intersect, a plugin forbidding sweep-2 is never asked (tier 1 decides); as a
    veto it removes sweep-2 wherever it is listed, and Volcano's plugins choose the rest."""
    policy = 'plugin site\n\non reclaimable(reclaimer, candidates):\n    victim when name != "sweep-2"\n'
    tiered = run(cli, TWO_QUEUES, bundle(tmp_path, policy, with_site(1), name="tiered"))
    assert "research/sweep-2" in tiered["evicted"]
    veto = "hooks:\n  reclaimable: {combine: veto}\n"
    results = {tier: run(cli, TWO_QUEUES, bundle(tmp_path, policy, with_site(tier), hooks=veto, name=f"v{tier}"))
               for tier in (0, 1)}
    assert results[0]["evicted"] == results[1]["evicted"] == ["research/sweep-1", "research/sweep-0"]


def test_vetoes_names_the_vetoing_plugins_and_a_typo_is_b013(cli, tmp_path):
    policy = 'plugin site\n\non reclaimable(reclaimer, candidates):\n    victim when name != "sweep-2"\n'
    named = bundle(tmp_path, policy, with_site(1), hooks="hooks:\n  reclaimable: {combine: veto, vetoes: [site]}\n",
                   name="named")
    assert run(cli, TWO_QUEUES, named)["evicted"] == ["research/sweep-1", "research/sweep-0"]
    typo = bundle(tmp_path, policy, with_site(1), hooks="hooks:\n  reclaimable: {combine: veto, vetoes: [stie]}\n",
                  name="typo")
    result = cli("check", str(typo))
    assert result.code == 1 and "bundle.yaml:11:41: error[B013]: 'stie' vetoes but is not listed" in result.out


# -- one candidate rule, every evicting action -----------------------------------------------------

@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_gangreclaim_honours_the_min_runtime_rule(cli, tmp_path, engine):
    policy = "plugin site\n\narg min_runtime: duration = 3h\n\n" \
             "on preempt_candidate, reclaim_candidate(preemptor, task) = now - start_time >= min_runtime\n"
    folder = bundle(tmp_path, policy, with_site(0), "enqueue, allocate, gangreclaim")
    got = run(cli, TWO_QUEUES, folder, "--now", "2026-11-21T12:30:00Z", engine=engine)
    assert sorted(got["evicted"]) == ["research/sweep-0", "research/sweep-1"]
    volcano = bundle(tmp_path, "plugin site\n", with_site(0), "enqueue, allocate, gangreclaim", name="volcano")
    assert "research/sweep-2" in run(cli, TWO_QUEUES, volcano, "--now", "2026-11-21T12:30:00Z")["evicted"]


def test_an_evicting_action_of_the_bundle_that_ignores_the_rule_is_c033(cli, tmp_path):
    folder = bundle(tmp_path, "plugin site\n\non reclaim_candidate(reclaimer, task) = task.priority < 5\n",
                    with_site(0), "enqueue, allocate, drain")
    (folder / "drain.policy").write_text(
        "action drain\n\non execute:\n    let stmt = statement()\n    for node in nodes:\n"
        "        for task in node.tasks:\n            stmt.evict(task, \"drain\") when task.status == \"Running\"\n"
        "    stmt.commit()\n")
    text = (folder / "bundle.yaml").read_text().replace("sources: [site.policy]", "sources: [site.policy, drain.policy]")
    (folder / "bundle.yaml").write_text(text)
    result = cli("check", "--strict", str(folder))
    assert "bundle.yaml:6:10: error[C033]: action 'drain' evicts without asking reclaim_candidate: plugin " \
           "'site''s rule does not hold there" in result.out
    assert "preempt_candidate" in result.out and result.code == 1


# -- rules that see the evictions already chosen ---------------------------------------------------

# research (weight 3) runs four 1-CPU pods on a 4-CPU node; prod (weight 1) has one pending 2-CPU pod.
# Proportion: research deserves 3 CPUs (it asks 4), prod 1.
WITHIN_ONE = """apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: '4', memory: 16Gi, pods: '110'}}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: research}, spec: {weight: 3}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: prod}, spec: {weight: 1}}
- apiVersion: scheduling.volcano.sh/v1beta1
  kind: PodGroup
  metadata: {name: sweep, namespace: research}
  spec: {queue: research, minMember: 1}
  status: {phase: Running}
- apiVersion: scheduling.volcano.sh/v1beta1
  kind: PodGroup
  metadata: {name: big, namespace: prod}
  spec: {queue: prod, minMember: 1}
  status: {phase: Inqueue}
""" + "".join(f"""- apiVersion: v1
  kind: Pod
  metadata: {{name: sweep-{i}, namespace: research, uid: s{i}, annotations: {{scheduling.k8s.io/group-name: sweep}}}}
  spec: {{nodeName: n1, containers: [{{name: c, resources: {{requests: {{cpu: '1', memory: 1Gi}}}}}}]}}
  status: {{phase: Running}}
""" for i in range(4)) + """- apiVersion: v1
  kind: Pod
  metadata: {name: big-0, namespace: prod, uid: b0, annotations: {scheduling.k8s.io/group-name: big}}
  spec: {containers: [{name: c, resources: {requests: {cpu: '2', memory: 1Gi}}}]}
  status: {phase: Pending}
"""

AT_MOST_ONE = "plugin site\n\non reclaim_candidate(reclaimer, task) = len(queue.evicting) < 1\n"


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_rule_sees_this_reclaimers_earlier_victims(cli, tmp_path, engine):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(WITHIN_ONE)
    plain = bundle(tmp_path, "plugin site\n", [["priority", "gang", "conformance", "site"], ["drf", "predicates"]],
                   name="plain")
    assert len(run(cli, cluster, plain, engine=engine)["evicted"]) == 2
    once = bundle(tmp_path, AT_MOST_ONE, [["priority", "gang", "conformance", "site"], ["drf", "predicates"]],
                  name="once")
    got = run(cli, cluster, once, engine=engine)
    assert got["evicted"] == [] and not got.get("pipelined")


NEVER_BELOW_DESERVED = """plugin site

use quota

state deserved: map[Queue, Resource]

on open:
    deserved = proportion_deserved()

on reclaim_candidate(reclaimer, task):
    let queue = task.queue
    return true when queue == none or queue not in deserved
    return deserved[queue] <= queue.allocated - task.request
"""


def test_queue_allocated_counts_the_evictions_chosen_so_far(cli, tmp_path):
    """research holds 4 and deserves 3: one victim leaves 3, a second would leave 2."""
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(WITHIN_ONE)
    tiers = [["priority", "gang", "conformance", "site"], ["drf", "predicates"]]
    got = run(cli, cluster, bundle(tmp_path, NEVER_BELOW_DESERVED, tiers))
    assert got["evicted"] == []
