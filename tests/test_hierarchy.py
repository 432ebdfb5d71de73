"""The queue hierarchy (runtime/ingest/queue_tree.py) and the plugins that read it: capacity and HDRF."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fumarole.runtime.authoring.scenario import run_file, scenario_files
from fumarole.runtime.bundles.bundle import build_bundle
from fumarole.runtime.framework.arguments import hierarchy_enabled
from fumarole.runtime.framework.lifecycle import new_session, run_session
from fumarole.runtime.framework.session import Session
from fumarole.runtime.ingest.kube import cluster_from_objects
from fumarole.runtime.ingest.kube_convert import queue_from_object
from fumarole.runtime.ingest.queue_tree import build_queue_tree
from fumarole.runtime.ingest.scheduler_config import config_from_document
from fumarole.runtime.ingest.yamlpos import load_all

from clusters import NODE, queue, small_cluster

# Authored scenarios: HDRF (no upstream session test fits our tiers) and capacity's dry-run hooks.
SCENARIOS = [Path(__file__).parent / "scenarios" / area for area in ("hdrf", "capacity")]


def tree_of(*links: tuple[str, str]):
    return build_queue_tree([queue_from_object(queue(name, parent)) for name, parent in links])


def names(queues) -> list[str]:
    return [q.name for q in queues]


# -- the tree ----------------------------------------------------------------------

def test_sound_tree_links_parents_and_children():
    tree = tree_of(("root", ""), ("eng", ""), ("ml", "eng"), ("web", "eng"), ("ops", "root"))
    assert tree.ok and not tree.problems
    by_name = tree.queues
    assert names(tree.ancestors(by_name["ml"])) == ["root", "eng"]
    assert names(tree.ancestors(by_name["root"])) == []
    assert names(tree.children(by_name["eng"])) == ["ml", "web"]
    assert names(tree.children(by_name["ml"])) == []
    top_down = names(tree.top_down)
    assert top_down[0] == "root" and sorted(top_down) == ["eng", "ml", "ops", "root", "web"]
    assert top_down.index("eng") < top_down.index("ml")


def test_root_ignores_its_own_parent():
    tree = tree_of(("root", "elsewhere"), ("a", ""))
    assert tree.ok
    assert names(tree.ancestors(tree.queues["a"])) == ["root"]


def test_missing_parent_names_the_queue():
    tree = tree_of(("root", ""), ("a", "ghost"), ("b", "a"))
    assert not tree.ok
    assert [(p.queue.name, p.parent) for p in tree.problems] == [("a", "ghost")]
    assert names(tree.top_down) == ["root"]


def test_a_cycle_is_named_but_leaves_the_tree_ok():
    """updateAncestors records a queue before climbing to its parent and never climbs to one already
    recorded, so x (met first) gets the chain x, z, y back to itself: y [x], z [x, y], x [x, y, z]."""
    tree = tree_of(("root", ""), ("x", "z"), ("y", "x"), ("z", "y"), ("leaf", "y"))
    assert tree.ok
    assert [(p.queue.name, p.cycle) for p in tree.problems] == [("x", ("x", "z", "y", "x"))]
    by_name = tree.queues
    assert [names(tree.ancestors(by_name[n])) for n in ("x", "y", "z", "leaf")] == [
        ["x", "y", "z"], ["x"], ["x", "y"], ["x", "y"]]
    assert names(tree.children(by_name["y"])) == ["z", "leaf"]
    assert names(tree.top_down) == ["root"]  # checkHierarchicalQueue never reaches the cycle


def test_a_queue_that_is_its_own_parent_is_its_own_child_and_ancestor():
    tree = tree_of(("root", ""), ("w", "x"), ("x", "x"))
    assert tree.ok
    assert [(p.queue.name, p.cycle) for p in tree.problems] == [("x", ("x", "x"))]
    x = tree.queues["x"]
    assert names(tree.children(x)) == ["w", "x"] and names(tree.ancestors(x)) == ["x"]
    assert names(tree.ancestors(tree.queues["w"])) == ["x", "x"]


def test_missing_root_is_a_missing_parent():
    tree = tree_of(("a", ""), ("b", "a"))
    assert not tree.ok and tree.root is None
    assert [p.queue.name for p in tree.problems] == ["a"]


def test_no_queues_is_not_a_tree():
    assert not build_queue_tree([]).ok


def test_problem_points_at_spec_parent():
    text = ("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: root}\n---\n"
            "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: a}\n"
            "spec:\n  weight: 1\n  parent: nowhere\n")
    cluster = cluster_from_objects(load_all(text), "c.yaml", text)
    tree = build_queue_tree(queue_from_object(obj) for obj in cluster.queues)
    diagnostic = tree.problems[0].diagnostic("c.yaml")
    assert (diagnostic.code, diagnostic.severity, diagnostic.location) == ("K110", "warning", "c.yaml:10:3")
    assert diagnostic.message.startswith("queue 'a' has parent 'nowhere', which is not a queue: ")
    assert diagnostic.hint == "fix spec.parent, or turn enableHierarchy off for the plugin"


# -- sessions and the command line ---------------------------------------------------

def capacity_config(hierarchy: bool) -> dict:
    return {"actions": "allocate", "tiers": [{"plugins": [{"name": "capacity", "enableHierarchy": hierarchy}]}]}


def session_for(objects: list[dict], config: dict) -> Session:
    bundle = build_bundle(config_from_document(config))
    return new_session(bundle, cluster_from_objects(objects))


def test_hierarchy_switch_is_read_from_the_plugin_entry():
    objects = [NODE, queue("root")]
    assert hierarchy_enabled(session_for(objects, capacity_config(True)), "capacity")
    assert not hierarchy_enabled(session_for(objects, capacity_config(False)), "capacity")
    assert not hierarchy_enabled(session_for(objects, capacity_config(True)), "drf")


@pytest.mark.parametrize("elsewhere, binds, problems", [
    ([], 1, []),
    ([("x", "y"), ("y", "x")], 1, ["x"]),  # no error from updateAncestors: the plugin stays ready
    ([("x", "x")], 1, ["x"]),
    ([("g", "ghost")], 0, ["g"]),  # "invalid parent queue": not ready
])
def test_only_a_missing_parent_makes_capacity_not_ready(elsewhere, binds, problems):
    """Far from the job's queue, a missing parent stops the plugin and a cycle does not
    (capacity.go: buildHierarchicalQueueAttrs returns false only on updateAncestors' error)."""
    queues = [queue("root"), queue("mid"), queue("leaf", "mid")] + [queue(n, p) for n, p in elsewhere]
    decisions = run_session(session_for(small_cluster(queues, "leaf"), capacity_config(True)))
    assert len(decisions.binds) == binds


@pytest.mark.parametrize("job_queue", ["x", "y"])
def test_a_job_in_a_cycle_makes_capacity_not_ready(job_queue):
    """Each queue of the cycle has a child, so the job is in a queue that is not a leaf."""
    queues = [queue("root"), queue("x", "y"), queue("y", "x")]
    assert run_session(session_for(small_cluster(queues, job_queue), capacity_config(True))).binds == []


@pytest.mark.parametrize("objects, warning", [
    ([NODE, queue("root"), queue("a", "b"), queue("b", "a")],
     "warning[K110]: queue 'a' is its own ancestor (spec.parent links a -> b -> a): with enableHierarchy these "
     "queues and those below them get no capacity, and a job in the cycle leaves the capacity plugin not ready"),
    ([NODE, queue("root"), queue("a", "ghost")],
     "warning[K110]: queue 'a' has parent 'ghost', which is not a queue: with enableHierarchy the capacity plugin "
     "is not ready (it admits, allocates and reclaims nothing)"),
])
def test_run_warns_of_a_broken_hierarchy_and_runs(cli, tmp_path, objects, warning):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text("\n---\n".join(json.dumps(o) for o in objects))
    conf = tmp_path / "scheduler.conf"
    conf.write_text(json.dumps(capacity_config(True)))
    result = cli("run", str(cluster), "--config", str(conf))
    assert result.code == 0
    assert [line for line in result.err.splitlines() if "[K110]" in line] == [f"{cluster}:5:115: {warning}"]
    conf.write_text(json.dumps(capacity_config(False)))
    result = cli("run", str(cluster), "--config", str(conf))
    assert result.code == 0 and "K110" not in result.err


# -- authored scenarios ----------------------------------------------------------------

@pytest.mark.parametrize("path", scenario_files(SCENARIOS), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_scenario(path: Path):
    outcome = run_file(path)
    assert outcome.passed, outcome.difference
