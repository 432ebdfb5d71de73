"""Allocate's HyperNode search: what its dry runs cost, with Volcano's decisions unchanged."""

from __future__ import annotations

from collections import Counter
from typing import Callable, NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.shapes import cluster_objects
from fumarole.runtime.authoring.scenario import decisions_as_expect
from fumarole.runtime.framework import dispatch
from fumarole.runtime.framework.lifecycle import new_session
from fumarole.runtime.framework.predicate_helper import PredicateHelper
from fumarole.runtime.framework.session import Session
from fumarole.runtime.framework.statement import Statement
from fumarole.runtime.ingest.kube import cluster_from_objects
from fumarole.runtime.ingest.scheduler_options import SchedulerOptions
from tests.differential import _hypernode, bundle, decisions_and_questions, hypernode_clusters


def _redone(monkeypatch, config: str, engine: str) -> tuple[list[int], int, dict]:
    """How many operations each redo of saved operations (Statement.recover) replayed, how many
    job turns searched HyperNode gradients, and the decisions, on the 30-node HyperNode shape."""
    redone: list[int] = []
    recover = Statement.recover

    def counting(self, saved):
        redone.append(len(saved.operations))
        return recover(self, saved)
    monkeypatch.setattr(Statement, "recover", counting)
    placed, turns = decisions_and_questions(cluster_objects(30, "hypernodes"), config, engine,
                                            "hyper_node_gradient_for_job", "", True, phase="allocate")
    return redone, turns, placed


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_sub_job_dry_run_is_kept_and_a_job_redoes_only_the_winner_it_did_not_try_last(monkeypatch, engine):
    """Volcano tries a job (and each sub-job) in every HyperNode of a gradient, discards every dry
    run, then redoes the winner's operations.  A sub-job of a job without sub-group policies has
    one HyperNode to try, so allocate scores it first and keeps that dry run; a job's dry run that
    found a solution is discarded only when the next starts, so a winner tried last is kept.  On
    this shape (32 leaves a gradient) the four hard-topology job turns redo 3 winners of 10 pods;
    before, each turn also redid the sub-job's run in every leaf that took it (13 redos)."""
    redone, turns, placed = _redone(monkeypatch, "topology-aware", engine)
    assert turns == 4  # the shape's pending jobs with a hard network topology, one turn each
    assert redone == [10, 10, 10]
    assert len(placed["binds"]) == 190


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_gradient_of_one_hyper_node_redoes_nothing(monkeypatch, engine):
    """Without network-topology-aware a job's only gradient is the cluster top: its one dry run is
    the placement, kept as it is (before: redone twice, for the sub-job and for the job)."""
    redone, turns, placed = _redone(monkeypatch, "default", engine)
    assert turns == 4
    assert redone == []
    assert len(placed["binds"]) == 190


def _placements(monkeypatch, objects: list[dict], engine: str) -> tuple[int, int, dict]:
    """How many placements and rollbacks the session made (Session.place / undo_placement)."""
    made = {"place": 0, "undo_placement": 0}
    for name in made:
        original = getattr(Session, name)

        def counting(self, *args, _original=original, _name=name):
            made[_name] += 1
            return _original(self, *args)
        monkeypatch.setattr(Session, name, counting)
    placed, _turns = decisions_and_questions(objects, "topology-aware", engine, "hyper_node_gradient_for_job", "",
                                             True, phase="allocate")
    return made["place"], made["undo_placement"], placed


@pytest.mark.parametrize("nodes, engine, made, binds", [
    (30, "fast", (232, 42), 190),
    (30, "reference", (232, 42), 190),
    (100, "fast", (809, 209), 600),
])
def test_dry_runs_go_best_first_and_those_after_a_solution_are_not_run(monkeypatch, nodes, engine, made, binds):
    """The shape's hard-topology jobs are one gang each (minMember is every pod), so each dry run's
    score is hyper_node_order before it runs: the leaves are tried best first, and once one takes
    the job only the gradient's last leaf runs besides.  Placements and rollbacks when every dry
    run ran: 272 and 82 at 30 nodes, 1,769 and 1,169 at 100; passing over only the dry runs
    scoring no more than a solution found, in gradient order: 232 and 42, 1,039 and 439."""
    placements, rollbacks, placed = _placements(monkeypatch, cluster_objects(nodes, "hypernodes"), engine)
    assert (placements, rollbacks) == made
    assert len(placed["binds"]) == binds


def _gang_all(objects: list[dict]) -> list[dict]:
    """The cluster with every PodGroup's minMember raised to its pod count (one gang)."""
    pods: dict[str, int] = {}
    for obj in objects:
        if obj["kind"] == "Pod":
            group = obj["metadata"]["annotations"]["scheduling.k8s.io/group-name"]
            pods[group] = pods.get(group, 0) + 1
    for obj in objects:
        if obj["kind"] == "PodGroup":
            obj["spec"]["minMember"] = pods.get(obj["metadata"]["name"], 1)
    return objects


class Scan(NamedTuple):
    """One node scan of a dry run: the job and task it placed, the nodes and the rotating start."""
    job: str
    task: str
    nodes: tuple[str, ...]
    start: int


def _outcome(objects: list[dict], start: int, minimum: int = 100) -> tuple[tuple[dict, int, dict], list[Scan]]:
    """Decisions, the rotating scan start the session leaves and each job's fit errors; and every
    scan the session made: the task, the nodes and the rotating start it began at (with
    --minimum-feasible-nodes ``minimum``)."""
    scans: list[Scan] = []
    scan = PredicateHelper.predicate_nodes

    def recording(self, task, nodes, check, cache):
        scans.append(Scan(task.job_id, task.uid, tuple(node.name for node in nodes), self.ssn.predicate_start_index))
        return scan(self, task, nodes, check, cache)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(PredicateHelper, "predicate_nodes", recording)
        session = new_session(bundle("topology-aware"), cluster_from_objects(objects), now=1_800_000_000.0,
                              options=SchedulerOptions(minimum_feasible_nodes=minimum))
        session.open()
        session.predicate_start_index = start
        session.run_actions()
    errors = {uid: {task: str(error) for task, error in sorted(job.fit_errors.items())}
              for uid, job in sorted(session.jobs.items())}
    start_after = session.predicate_start_index
    return (decisions_as_expect(session.close()), start_after, errors), scans


def _turns(scans: list[Scan]) -> list[tuple[str, Counter]]:
    """The scans grouped by job turn (each run of consecutive scans for one job's tasks), each
    turn's scans as a multiset."""
    turns: list[tuple[str, Counter]] = []
    for scan in scans:
        if not turns or turns[-1][0] != scan.job:
            turns.append((scan.job, Counter()))
        turns[-1][1][scan] += 1
    return turns


def _each_within(part: list[Scan], whole: list[Scan]) -> bool:
    """Whether ``part`` makes the job turns of ``whole`` in the same order, each turn's scans
    among that turn's scans in ``whole`` (same task, nodes and rotating start).  Within a turn the
    dry runs go best first, not in gradient order, so the order of scans inside a turn differs."""
    mine, theirs = _turns(part), _turns(whole)
    return ([job for job, _ in mine] == [job for job, _ in theirs]
            and all(made <= every for (_, made), (_, every) in zip(mine, theirs)))


def _scans_match_running_every_dry_run(objects: list[dict], start: int,
                                       minimum: int = 100) -> tuple[list[Scan], list[Scan]]:
    """Run the session as allocate does, then with every HyperNode's scan treated as sampling (so
    every dry run runs); assert the same outcome and that each job turn's scans are among that
    turn's scans when every dry run runs, begun at the same rotating start.  Returns the scans
    made, and those of running every one."""
    best_first, scans = _outcome(objects, start, minimum)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(PredicateHelper, "scans_every_node", lambda _self, _nodes: False)
        every_one, all_scans = _outcome(objects, start, minimum)
    assert best_first == every_one
    assert _each_within(scans, all_scans)
    return scans, all_scans


def _leaves(sizes: list[int], cpus: list[int], nominated: str = "") -> list[dict]:
    """Leaves of these sizes, their nodes of these CPU counts (16 GiB), all under one spine, and
    one pending one-pod job with a hard network topology within a leaf (its pod nominated to the
    node ``nominated``, if given)."""
    objects: list[dict] = []
    per_node = [cpu for size, cpu in zip(sizes, cpus) for _ in range(size)]
    objects += [{"apiVersion": "v1", "kind": "Node",
                 "metadata": {"name": f"n{i:03d}", "labels": {"kubernetes.io/hostname": f"n{i:03d}"}},
                 "status": {"allocatable": {"cpu": str(cpu), "memory": "16Gi", "pods": "110"},
                            "capacity": {"cpu": str(cpu), "memory": "16Gi", "pods": "110"}}}
                for i, cpu in enumerate(per_node)]
    first = 0
    for leaf, size in enumerate(sizes):
        objects.append(_hypernode(f"leaf{leaf}", 1, [{"type": "Node", "selector": {"exactMatch": {"name": f"n{i:03d}"}}}
                                                     for i in range(first, first + size)]))
        first += size
    objects.append(_hypernode("spine", 2, [{"type": "HyperNode", "selector": {"exactMatch": {"name": f"leaf{leaf}"}}}
                                           for leaf in range(len(sizes))]))
    objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q0"},
                    "spec": {"weight": 1}, "status": {"state": "Open"}})
    objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                    "metadata": {"name": "j0", "namespace": "ns", "creationTimestamp": "2026-01-01T00:00:00Z"},
                    "spec": {"queue": "q0", "minMember": 1,
                             "networkTopology": {"mode": "hard", "highestTierAllowed": 1}},
                    "status": {"phase": "Pending"}})
    objects.append({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": "j0-0", "namespace": "ns", "uid": "u-j0-0",
                                 "annotations": {"scheduling.k8s.io/group-name": "j0"},
                                 "creationTimestamp": "2026-01-01T00:01:00Z"},
                    "spec": {"containers": [{"name": "c", "image": "img:1",
                                             "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]},
                    "status": {"phase": "Pending", **({"nominatedNodeName": nominated} if nominated else {})}})
    return objects


@pytest.mark.parametrize("sizes, cpus, start, every_start, runs", [
    ([3, 2, 3], [2, 8, 8], 2, [2, 2, 0], [(0, 2), (2, 0)]),
    ([3, 4, 3], [2, 8, 8], 5, [5, 2, 2], [(0, 5), (2, 2)]),
    ([3, 3, 3], [8, 2, 8], 4, [4, 1, 1], [(1, 1), (2, 1)]),
])
def test_a_dry_run_begins_at_the_scan_start_of_its_turn_in_gradient_order(sizes, cpus, start, every_start, runs):
    """Empty leaves of 2-CPU and 8-CPU nodes and a one-pod job: the leaf of 2-CPU nodes fills most
    (scores highest), so it runs first and takes the job; the others are not run but the last,
    which runs last.  A dry run scans its leaf's nodes from start mod the leaf's size, so each run
    begins where the runs before it in gradient order leave the start (from 2, after two nodes:
    0; from 2, after four: 2; from 4, after three: 1), as when every dry run runs."""
    scans, all_scans = _scans_match_running_every_dry_run(_leaves(sizes, cpus), start)
    assert [scan.start for scan in all_scans] == every_start
    assert [(scan.nodes, scan.start) for scan in scans] == [(all_scans[leaf].nodes, begun) for leaf, begun in runs]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=hypernode_clusters(max_nodes=24), start=st.integers(0, 40))
def test_dry_runs_best_first_leave_what_running_every_one_leaves(objects: list[dict], start: int):
    """Generated HyperNode trees whose jobs are one gang each: the session that runs the dry runs
    best first and not those after a solution makes the decisions, leaves the rotating scan start
    and keeps the fit errors of the session that runs every one in gradient order
    (scans_every_node answering no turns the shortcut off), and each scan it makes is one of that
    session's, begun at the same rotating start."""
    _scans_match_running_every_dry_run(_gang_all(objects), start)


@pytest.mark.parametrize("sizes, cpus, nominated, minimum, leaves_run", [
    # leaf 1 (three nodes; a scan there stops at two that fit) is beaten by leaf 2, but leaf 2's
    # turn starts where leaf 1's run leaves the start: leaf 1 runs, leaf 0 does not.
    ([2, 3, 2, 2], [8, 8, 2, 8], "", 2, [1, 2, 3]),
    # the best leaf comes before the sampled one, which the last's turn still needs.
    ([2, 2, 3, 2], [8, 2, 8, 8], "", 2, [1, 2, 3]),
    # the pod's nominated node is in the last leaf: the others' ends are foreseen.
    ([2, 2, 2], [8, 2, 8], "n005", 100, [1, 2]),
    # ... in the first leaf: its one-node scan puts the start at 0, so it runs before the best.
    ([2, 2, 2], [8, 2, 8], "n000", 100, [0, 1, 2]),
])
def test_a_dry_run_whose_end_is_not_foreseen_runs_only_when_a_later_turn_needs_its_start(
        sizes, cpus, nominated, minimum, leaves_run):
    """A dry run in a HyperNode whose scans sample its nodes (more than --minimum-feasible-nodes)
    or that holds a pending pod's nominated node leaves the rotating start where what fits puts
    it: it is run (in gradient order) when a later turn's start needs it, and the dry runs whose
    end is foreseen are still passed over once a better one found a solution.  Decisions, the
    start left and the fit errors are those of running every dry run."""
    objects = _leaves(sizes, cpus, nominated)
    members = [{f"n{i:03d}" for i in range(sum(sizes[:leaf]), sum(sizes[:leaf + 1]))} for leaf in range(len(sizes))]
    for start in range(7):
        scans, _all_scans = _scans_match_running_every_dry_run(objects, start, minimum)
        run = [leaf for leaf, names in enumerate(members) if any(names & set(scan.nodes) for scan in scans)]
        assert run == leaves_run


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=hypernode_clusters(max_nodes=24, nominated=True), start=st.integers(0, 40), minimum=st.integers(1, 5))
def test_dry_runs_best_first_with_sampled_scans_and_nominated_nodes_leave_what_running_every_one_leaves(
        objects: list[dict], start: int, minimum: int):
    """As above with --minimum-feasible-nodes of one to five (most HyperNodes' scans sample their
    nodes) and pending pods with a nominated node: the dry runs whose end is not foreseen run
    when a later turn needs their start, the rest best first."""
    objects = _gang_all(objects)
    _scans_match_running_every_dry_run(objects, start, minimum)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=hypernode_clusters(max_nodes=24, nominated=True, releasing=True, roles=True), start=st.integers(0, 40),
       minimum=st.integers(1, 100))
def test_dry_runs_of_jobs_that_are_not_one_gang_leave_what_running_every_one_leaves(
        objects: list[dict], start: int, minimum: int):
    """Generated HyperNode trees whose jobs need one to all of their pods (minMember), some with a
    minimum for a task role (minTaskMember), some of them already running, some of their pods being deleted (their nodes' future idle exceeds the
    idle, so a dry run may pipeline a task there), some pending pods with a nominated node, with
    sampled scans or not: a job that needs fewer than all its pods and has no task-role minimum
    makes each dry run in one pass (a failed task does not stop it), whether or not the job is
    ready or pipelined now, so its dry runs too go best first (with a role minimum a failed task
    of that role may stop a pass, and every dry run runs); decisions, the rotating start
    left, the fit errors and each scan are those of running every dry run."""
    _scans_match_running_every_dry_run(objects, start, minimum)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=hypernode_clusters(max_nodes=24, nominated=True, releasing=True, roles=True, sub_groups=True),
       start=st.integers(0, 40), minimum=st.integers(1, 100))
def test_dry_runs_of_jobs_with_sub_groups_leave_what_running_every_one_leaves(
        objects: list[dict], start: int, minimum: int):
    """Generated HyperNode trees whose jobs split their pods into two or three sub-groups
    (subGroupSize the whole sub-group or less, minSubGroups zero to all, a network topology of
    their own or not), with minMember one to all of the pods, task-role minimums, pods being
    deleted, nominated nodes and sampled scans or not: the dry runs go best first by their first
    sub-job's score, one whose ceiling (hyper_node_order_bound) cannot reach the best solution
    found is passed over, and one made stops before its last sub-job when that sub-job cannot
    lift it there; decisions, the rotating start left, the fit errors and each scan are
    those of running every dry run in full."""
    _scans_match_running_every_dry_run(objects, start, minimum)


def _sub_group_leaves(used_in_leaf1: int) -> list[dict]:
    """Four leaves of two nodes under a spine: leaf 0 of 8-CPU nodes with 10 of its 16 CPUs in use,
    leaf 1 of 4-CPU nodes with ``used_in_leaf1`` millicores in use, leaves 2 and 3 empty 8-CPU
    nodes (memory in proportion, so a HyperNode's binpacking score is its CPU share); and a
    pending job held within a leaf, of two sub-groups of two 1-CPU pods, every pod needed."""
    cpus = [8, 8, 4, 4, 8, 8, 8, 8]
    objects: list[dict] = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}"}},
         "status": {"allocatable": {"cpu": str(cpu), "memory": f"{2 * cpu}Gi", "pods": "110"},
                    "capacity": {"cpu": str(cpu), "memory": f"{2 * cpu}Gi", "pods": "110"}}}
        for i, cpu in enumerate(cpus)]
    objects += [_hypernode(f"leaf{leaf}", 1, [{"type": "Node", "selector": {"exactMatch": {"name": f"n{i}"}}}
                                              for i in (2 * leaf, 2 * leaf + 1)]) for leaf in range(4)]
    objects.append(_hypernode("spine", 2, [{"type": "HyperNode", "selector": {"exactMatch": {"name": f"leaf{leaf}"}}}
                                           for leaf in range(4)]))
    objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q0"},
                    "spec": {"weight": 1}, "status": {"state": "Open"}})
    split = {"networkTopology": {"mode": "hard", "highestTierAllowed": 1},
             "subGroupPolicy": [{"name": "part", "subGroupSize": 2, "minSubGroups": 2, "matchLabelKeys": ["part"]}]}
    for name, spec, phase in [("running", {"minMember": 1}, "Running"), ("j0", {"minMember": 4, **split}, "Pending")]:
        objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                        "metadata": {"name": name, "namespace": "ns", "creationTimestamp": "2026-01-01T00:00:00Z"},
                        "spec": {"queue": "q0", **spec}, "status": {"phase": phase}})
    pods = [("r0", "running", 8000, {}, "n0"), ("r1", "running", 2000, {}, "n1"),
            ("r2", "running", used_in_leaf1, {}, "n2")]
    pods += [(f"j0-{p}", "j0", 1000, {"part": f"p{p // 2}"}, "") for p in range(4)]
    for name, group, millis, labels, node in pods:
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "namespace": "ns", "uid": f"u-{name}", "labels": labels,
                            "annotations": {"scheduling.k8s.io/group-name": group},
                            "creationTimestamp": "2026-01-01T00:01:00Z"},
               "spec": {"containers": [{"name": "c", "image": "img:1",
                                        "resources": {"requests": {"cpu": f"{millis}m", "memory": f"{2 * millis}Mi"}}}]},
               "status": {"phase": "Pending"}}
        if node:
            pod["spec"]["nodeName"] = node
            pod["status"] = {"phase": "Running", "startTime": "2026-01-01T00:02:00Z"}
        objects.append(pod)
    return objects


@pytest.mark.parametrize("used_in_leaf1, bounded, winner, scans_per_leaf", [
    # leaf 0's first sub-group scores 12/16, leaf 1's 5/8: leaf 0 wins (1.625 against 1.5).  The
    # runs in leaves 1 and 2 cannot reach it (ceilings 5/8 + 7/8 and 2/16 + 4/16): passed over.
    (3000, True, ("n1",), [4, 0, 0, 4]),
    # leaf 1's first sub-group scores 5.6/8, below leaf 0's, but its second adds 2/8 where leaf
    # 0's adds 2/16: leaf 1 wins (1.65 against 1.625), so its run is made; leaf 2's is not.
    (3600, True, ("n3",), [4, 4, 0, 4]),
    # Without the plugin's bound, a run is made up to its last sub-group, whose score then says
    # whether it may still win: leaves 1 and 2 stop there (3000), leaf 2 only (3600).
    (3000, False, ("n1",), [4, 2, 2, 4]),
    (3600, False, ("n3",), [4, 4, 2, 4]),
])
def test_a_sub_group_job_dry_run_is_cut_short_only_when_it_cannot_win(
        monkeypatch, used_in_leaf1, bounded, winner, scans_per_leaf):
    """A job of two sub-groups within a leaf: the dry runs go best first by the first sub-group's
    HyperNode score.  A run whose ceiling (that score plus hyper_node_order_bound of the second
    with the first's requests added) cannot reach the best solution found is passed over; else,
    before the last sub-group runs, its score (hyper_node_order on the leaf as the first left it)
    is added to the run's, and a run that cannot reach the best stops there.  A run whose first
    sub-group scores lower but whose second lifts it above the best is made and wins.  The
    gradient's last (leaf 3) always runs in full; decisions, the start left and the fit errors
    are those of running every dry run."""
    if not bounded:
        monkeypatch.setitem(dispatch.COMBINATORS, "sum-bound", (lambda _tiers: dispatch.unbounded, frozenset({"score"})))
    scans, _all_scans = _scans_match_running_every_dry_run(_sub_group_leaves(used_in_leaf1), 0)
    placed, _ = _outcome(_sub_group_leaves(used_in_leaf1), 0)
    assert set(placed[0]["binds"].values()) == set(winner)
    assert [sum(1 for scan in scans if scan.nodes == (f"n{2 * leaf}", f"n{2 * leaf + 1}")) for leaf in range(4)] \
        == scans_per_leaf


@pytest.mark.parametrize("engine, made, every_one, binds", [
    ("fast", (283, 73), (396, 186), 210),
    ("reference", (283, 73), (396, 186), 210),
])
def test_dry_runs_of_jobs_placed_part_by_part_go_best_first(monkeypatch, engine, made, every_one, binds):
    """The elastic shape's network-topology jobs need 4 of their 10 pods: a first search places 4,
    then each further pod has a search of its own, the job being ready.  Each dry run makes one
    pass, so they go best first: placements and rollbacks fall from ``every_one`` (every dry run
    run, the shortcut off) to ``made``, with the same binds."""
    objects = cluster_objects(30, "elastic")
    assert _placements(monkeypatch, objects, engine)[:2] == made
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(PredicateHelper, "scans_every_node", lambda _self, _nodes: False)
        placements, rollbacks, placed = _placements(patch, objects, engine)
    assert (placements, rollbacks) == every_one
    assert len(placed["binds"]) == binds


def _binpack(request, used, capacity) -> float:
    """Volcano's HyperNode binpacking for a request under the plugin's default weights (cpu and
    memory, 1 each): the mean of (used + request) / allocatable, 0 when one overflows."""
    total, weights = 0.0, 0
    for name in request.resource_names():
        if name not in ("cpu", "memory"):
            continue
        if used.get(name) + request.get(name) > capacity.get(name):
            return 0.0
        total += (used.get(name) + request.get(name)) / capacity.get(name)
        weights += 1
    return total / weights if weights else 0.0


def _binpacking_checked(objects: list[dict], engine: str) -> tuple[int, dict]:
    """Run a topology-aware session, checking after every placement and rollback (dry runs
    included) that each binpacking value network-topology-aware keeps is the one worked out
    afresh; how many kept values were checked after rollbacks, and the decisions."""
    rolled_back = [0]
    session = new_session(bundle("topology-aware"), cluster_from_objects(objects), now=1_800_000_000.0, engine=engine)

    def check_kept() -> int:
        state = session.plugin_state("network-topology-aware")
        for hyper_node, kept in state["binpack_of"].items():
            assert kept == _binpack(state["binpack_request"], state["used"][hyper_node], state["capacity"][hyper_node])
        return len(state["binpack_of"])

    def after(name: str) -> None:
        kept = check_kept()
        if name == "undo_placement":
            rolled_back[0] += kept

    _run_checking(session, after)
    check_kept()
    return rolled_back[0], decisions_as_expect(session.close())


def _run_checking(session, after: Callable[[str], object]) -> None:
    """Open the session and run its actions, calling ``after("place")`` after every placement and
    ``after("undo_placement")`` after every rollback (dry runs included)."""
    with pytest.MonkeyPatch.context() as patch:
        for name in ("place", "undo_placement"):
            original = getattr(Session, name)

            def checking(self, *args, _original=original, _name=name):
                result = _original(self, *args)
                after(_name)
                return result
            patch.setattr(Session, name, checking)
        session.open()
        session.run_actions()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=hypernode_clusters(max_nodes=24), engine=st.sampled_from(["fast", "reference"]))
def test_the_binpacking_kept_between_node_scores_is_what_each_hyper_node_holds_now(objects: list[dict], engine: str):
    """network-topology-aware keeps each HyperNode's binpacking for the last normal pod's request
    from one node scoring to the next and drops it when an allocation or a rollback changes the
    HyperNode: every kept value is the one worked out afresh, all through the session."""
    _binpacking_checked(objects, engine)


def _pod(name: str, cpu: int, created: str, extra: dict) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ns", "uid": f"u-{name}", "creationTimestamp": created,
                         "annotations": {"scheduling.k8s.io/group-name": name.rsplit("-", 1)[0]}},
            "spec": {"containers": [{"name": "c", "image": "img:1",
                                     "resources": {"requests": {"cpu": str(cpu), "memory": "1Gi"}}}], **extra},
            "status": {"phase": "Pending"}}


def _rolled_back_gang() -> list[dict]:
    """Leaf 0 of two empty 4-CPU nodes, leaf 1 of one 4-CPU node running a 2-CPU pod, and a gang
    of three pods without a network topology: a 3-CPU pod, which fits leaf 0 only; a 1-CPU pod,
    which leaf 1 (fuller with it) takes, its nodes scored with leaf 0's binpacking worked out with
    the first pod there; and a 1-CPU pod whose node selector no node matches, so the gang is
    rolled back."""
    objects = _leaves([2, 1], [4, 4])[:-2]  # the nodes, the HyperNodes and the queue
    group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
             "metadata": {"name": "", "namespace": "ns", "creationTimestamp": "2025-01-01T00:00:00Z"},
             "spec": {"queue": "q0", "minMember": 0}, "status": {"phase": "Pending"}}
    running = _pod("busy-0", 2, "2025-01-01T00:00:00Z", {"nodeName": "n002"})
    running["status"]["phase"] = "Running"
    objects += [{**group, "metadata": {**group["metadata"], "name": "busy"},
                 "spec": {"queue": "q0", "minMember": 1}, "status": {"phase": "Running"}}, running]
    objects += [{**group, "metadata": {**group["metadata"], "name": "wide"}, "spec": {"queue": "q0", "minMember": 3}},
                _pod("wide-0", 3, "2025-01-01T00:01:00Z", {}), _pod("wide-1", 1, "2025-01-01T00:02:00Z", {}),
                _pod("wide-2", 1, "2025-01-01T00:03:00Z", {"nodeSelector": {"disk": "none"}})]
    return objects


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_rolled_back_gang_drops_the_binpacking_its_placements_changed(engine):
    """A gang rolled back (_rolled_back_gang): leaf 0's binpacking, kept from the second pod's
    scores, was worked out with the first pod on leaf 0; a rollback that did not drop it would
    leave it there when the first pod goes, and fail the check."""
    rolled_back, placed = _binpacking_checked(_rolled_back_gang(), engine)
    assert rolled_back > 0
    assert not placed.get("binds")


def _sub_job_requests_checked(objects: list[dict], engine: str) -> tuple[int, dict]:
    """Run a topology-aware session, checking after every placement and rollback that each
    sub-job's summed request network-topology-aware keeps is the sum over the sub-job's tasks as
    they stand (cpu and memory, the weighed resources, in the order the tasks first name them);
    the most requests kept at one check, and the decisions."""
    most = [0]
    session = new_session(bundle("topology-aware"), cluster_from_objects(objects), now=1_800_000_000.0, engine=engine)

    def check_kept() -> None:
        kept = session.plugin_state("network-topology-aware")["sub_job_requests"]
        for sub_job, request in kept.items():
            fresh: dict[str, float] = {}
            for task in sub_job.tasks.values():
                for name in task.request.resource_names():
                    if name in ("cpu", "memory"):
                        fresh[name] = fresh.get(name, 0.0) + task.request.get(name)
            assert list(request.items()) == list(fresh.items())
        most[0] = max(most[0], len(kept))

    _run_checking(session, lambda _name: check_kept())
    check_kept()
    return most[0], decisions_as_expect(session.close())


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=hypernode_clusters(max_nodes=24, sub_groups=True), engine=st.sampled_from(["fast", "reference"]))
def test_the_sub_job_requests_kept_between_hyper_node_scores_are_the_sums_over_their_tasks(objects, engine):
    """network-topology-aware sums a sub-job's weighed requests over its tasks once and keeps the
    sum for the session (a sub-job's tasks stay the same; placements only move them in its task
    order): every kept sum is the one worked out afresh, all through the session."""
    _sub_job_requests_checked(objects, engine)


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_the_requests_of_sub_jobs_placed_part_by_part_are_kept(engine):
    """On the elastic shape (jobs placed 4 pods first, then pod by pod) the HyperNode scores of
    each sub-job read its kept request, which stays the sum over its tasks as they are placed."""
    most, placed = _sub_job_requests_checked(cluster_objects(30, "elastic"), engine)
    assert most > 0
    assert placed.get("binds")


def test_nodes_per_key_and_values_by_key_read_each_node_under_its_key():
    """The two node-list functions network-topology-aware scores through: keys counted in the
    order the nodes first name them, nodes without a key left out or given the default, and a
    key without a value a failure; the fast engine's batch forms give the same."""
    from types import SimpleNamespace

    import numpy as np

    from fumarole.runtime.framework import scheduler_helper, vector_lib
    from fumarole.runtime.framework.node_columns import NodeBatch, NodeMap

    class Named(NamedTuple):
        name: str

    nodes = [Named(name) for name in ("c", "a", "x", "b", "a2")]
    keys = {"a": 1, "a2": 1, "b": 2, "c": 3}
    assert list(scheduler_helper.nodes_per_key(nodes, keys).items()) == [(3, 1), (1, 2), (2, 1)]
    scores = scheduler_helper.values_by_key(nodes, keys, {1: 0.5, 2: 0.25, 3: 1.0}, -1.0)
    assert [scores[n] for n in nodes] == [1.0, 0.5, -1.0, 0.25, 0.5]
    with pytest.raises(KeyError):
        scheduler_helper.values_by_key(nodes, keys, {1: 0.5, 2: 0.25}, -1.0)

    columns = SimpleNamespace(node_names=np.array([n.name for n in nodes], dtype=object))
    batch = NodeBatch(columns, np.array([4, 0, 2]))  # a2, c, x
    assert vector_lib.LIBRARY["_sched.nodes_per_key"](None, batch, keys) == {1: 1, 3: 1}
    column = vector_lib.LIBRARY["_sched.values_by_key"](None, batch, keys, {1: 0.5, 2: 0.25, 3: 1.0}, -1.0)
    assert isinstance(column, NodeMap) and column.column.tolist() == [0.5, 1.0, -1.0]
