"""One compiled rule against the same rule hand-written in Python: `python benchmarks/rule_bench.py`.

The rules are a victim filter (the min_runtime site policy) and a key-form
ordering (priority's task_order); each is timed over the same 1,000 tasks.
"""

from __future__ import annotations

import sys
import timeit
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fumarole.runtime.bundles.library import compile_sources  # noqa: E402
from fumarole.runtime.ingest.kube_convert import task_from_pod  # noqa: E402

POLICY = """plugin bench

arg min_runtime: duration = 10m

on reclaimable(reclaimer, candidates):
    for candidate in candidates:
        victim candidate when now - candidate.start_time >= min_runtime

on task_order(task):
    order by task.priority desc
"""


def tasks(n: int) -> list:
    return [task_from_pod({"metadata": {"name": f"p-{i}", "namespace": "ns", "uid": f"u{i}",
                                        "creationTimestamp": f"2026-11-21T{i % 24:02d}:00:00Z"},
                           "spec": {"priority": i % 7, "containers": [{"resources": {"requests": {"cpu": "1"}}}]},
                           "status": {"phase": "Running"}}) for i in range(n)]


class _Runtime(SimpleNamespace):
    """The two things the rules read from a session."""

    now = 1_795_000_000.0

    @staticmethod
    def start_time(task) -> float:
        return task.creation


def main() -> None:
    library = compile_sources([("bench.policy", POLICY)])
    hooks = library.plugins["bench"].instantiate(_Runtime(), SimpleNamespace(), {"min_runtime": 600.0})
    candidates = tasks(1000)
    runtime = _Runtime()
    min_runtime = 600.0

    def by_hand(reclaimer, cands):
        victims = []
        now = runtime.now
        for c in cands:
            if now - runtime.start_time(c) >= min_runtime:
                victims.append(c)
        return victims, 1

    def order_by_hand(l, r):
        return -1 if l.priority > r.priority else (1 if l.priority < r.priority else 0)

    assert hooks["reclaimable"](None, candidates) == by_hand(None, candidates)
    pairs = list(zip(candidates, reversed(candidates)))
    assert [hooks["task_order"](a, b) for a, b in pairs] == [order_by_hand(a, b) for a, b in pairs]

    def per_item(fn, number: int = 200) -> float:
        return min(timeit.repeat(fn, number=number, repeat=5)) / number / len(candidates) * 1e9

    rows = [
        ("victim rule, compiled", per_item(lambda: hooks["reclaimable"](None, candidates))),
        ("victim rule, hand-written Python", per_item(lambda: by_hand(None, candidates))),
        ("order rule, compiled", per_item(lambda: [hooks["task_order"](a, b) for a, b in pairs])),
        ("order rule, hand-written Python", per_item(lambda: [order_by_hand(a, b) for a, b in pairs])),
    ]
    for label, ns in rows:
        print(f"{label:34s} {ns:7.1f} ns per task")


if __name__ == "__main__":
    main()
