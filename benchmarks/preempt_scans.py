"""What preempt's node scans alone cost per kept eviction: `python benchmarks/preempt_scans.py [--nodes 100 250 500]`.

On the eviction-heavy shapes of `benchmarks/shapes.py` with every eviction action
(shapes_bench's ``evicting`` configuration), one in-process session under the fast
engine: preempt's and reclaim's CPU seconds, their evictions, preempt's preemptor
attempts (one predicate scan each, as Volcano's preempt.go runs
``PredicateHelper.PredicateNodes`` for every preemptor it pops) and the CPU seconds
of those scans alone, and the changes each action made to the session per eviction
it kept (placements, trial evictions, and their undoing when a statement is
discarded).  Volcano leaves each scan's effects behind (the rotating start of the
node list, the predicate error cache shared by both phases), so an exact preempt
runs every scan, and it makes the changes Volcano's preempt makes; their cost per
kept eviction is a floor under preempt's, to hold against reclaim's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.session_bench import _opened  # noqa: E402
from benchmarks.shapes import cluster_objects  # noqa: E402
from benchmarks.shapes_bench import _bundles  # noqa: E402
from fumarole.runtime.framework.predicate_helper import PredicateHelper  # noqa: E402
from fumarole.runtime.framework.session import Session  # noqa: E402
from fumarole.runtime.ingest.gc_pause import settle  # noqa: E402
from fumarole.runtime.ingest.kube import load_cluster  # noqa: E402


# The session's changes an eviction action makes: a placement (allocate or pipeline), an eviction,
# and each undone when its statement is discarded.
CHANGES = ("place", "undo_placement", "evict_in_session", "unevict")


class _Clock:
    """CPU seconds per action (the session reports each as it starts) and in preempt's scans."""

    def __init__(self) -> None:
        self.action = ""
        self.started = 0.0
        self.actions: dict[str, float] = {}
        self.scans = 0
        self.scan_seconds = 0.0
        self.changes: dict[str, int] = {}  # action -> placements, evictions and their undoing

    def entered(self, name: str, _placed: int) -> None:
        if name == self.action:
            return
        now = time.process_time()
        if self.action:
            self.actions[self.action] = now - self.started
        self.action, self.started = name, now

    def finished(self) -> None:
        self.entered("", 0)


def measure(nodes: int, shape: str) -> str:
    objects = cluster_objects(nodes, shape)
    cluster = load_cluster(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}), "cluster.json")
    settle()
    session = _opened(_bundles()["evicting"], cluster, "fast")
    clock = _Clock()
    scan = PredicateHelper.predicate_nodes

    def timed_scan(helper, *args, **kwargs):
        if clock.action != "preempt":
            return scan(helper, *args, **kwargs)
        started = time.process_time()
        try:
            return scan(helper, *args, **kwargs)
        finally:
            clock.scans += 1
            clock.scan_seconds += time.process_time() - started

    changes = {name: getattr(Session, name) for name in CHANGES}

    def counted(change):
        def count(*args, **kwargs):
            clock.changes[clock.action] = clock.changes.get(clock.action, 0) + 1
            return change(*args, **kwargs)
        return count

    PredicateHelper.predicate_nodes = timed_scan  # type: ignore[method-assign]
    for name, change in changes.items():
        setattr(Session, name, counted(change))
    try:
        session.progress = clock.entered
        session.run_actions()
        clock.finished()
    finally:
        PredicateHelper.predicate_nodes = scan  # type: ignore[method-assign]
        for name, change in changes.items():
            setattr(Session, name, change)
    decisions = session.close()
    made = {"preempt": 0, "reclaim": 0}
    for _task, reason in decisions.evictions:
        made[reason] = made.get(reason, 0) + 1
    preempt, reclaim = clock.actions.get("preempt", 0.0), clock.actions.get("reclaim", 0.0)
    per = lambda seconds, count: f"{1000 * seconds / count:.2f} ms" if count else "-"  # noqa: E731
    each = lambda action: f"{clock.changes.get(action, 0) / made[action]:.1f}" if made[action] else "-"  # noqa: E731
    return (f"{nodes} nodes, {shape}: preempt {preempt:.2f} s ({made['preempt']:,} evictions, "
            f"{per(preempt, made['preempt'])} each; {clock.scans:,} attempts, scans {clock.scan_seconds:.2f} s = "
            f"{per(clock.scan_seconds, made['preempt'])} per kept eviction; {each('preempt')} session changes "
            f"per kept eviction), reclaim {reclaim:.2f} s ({made['reclaim']:,} evictions, "
            f"{per(reclaim, made['reclaim'])} each; {each('reclaim')} session changes per eviction)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", nargs="+", type=int, default=[100, 250, 500])
    parser.add_argument("--shapes", nargs="+", default=["overshare", "priority"])
    args = parser.parse_args()
    for nodes in args.nodes:
        for shape in args.shapes:
            print(measure(nodes, shape), flush=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
