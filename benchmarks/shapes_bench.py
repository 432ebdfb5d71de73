"""Sessions on production-like shapes: `python benchmarks/shapes_bench.py [--nodes 100 250 500]`.

For each node count and shape of `benchmarks/shapes.py` (plain, affinity,
spread; hypernodes, racks, elastic and subgroups with `network-topology-aware` on and off; the eviction-heavy
overshare and priority shapes with `enqueue, allocate, backfill, preempt,
reclaim`; `priority/hdrf`: the priority shape's queues in a tree, reclaim decided by drf's
hierarchical shares; the plain and affinity shapes, and their ``-templated`` forms whose pods share
a template per job, also with predicates' equivalence cache on, ``cached``): the CPU seconds of one in-process session under the fast engine
(open, the actions and close; loading is not included), split per action, with
the evictions each eviction action made, and, unless --no-reference, under the
reference engine, with the speedup and whether both made the same binds and
evictions.  The least of --repeat runs (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.session_bench import split  # noqa: E402
from benchmarks.shapes import cluster_objects, in_a_hierarchy  # noqa: E402
from fumarole.runtime.bundles.bundle import build_bundle, default_bundle  # noqa: E402
from fumarole.runtime.ingest.scheduler_config import config_from_document  # noqa: E402

# Volcano's default configuration with network-topology-aware in the second tier.
TOPOLOGY_AWARE = {"actions": "enqueue, allocate, backfill",
                  "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
                            {"plugins": [{"name": "overcommit"}, {"name": "drf"}, {"name": "predicates"},
                                         {"name": "proportion"}, {"name": "nodeorder"}, {"name": "binpack"},
                                         {"name": "network-topology-aware"}]}]}
WITHOUT_TOPOLOGY = {"actions": TOPOLOGY_AWARE["actions"],
                    "tiers": [TOPOLOGY_AWARE["tiers"][0],
                              {"plugins": TOPOLOGY_AWARE["tiers"][1]["plugins"][:-1]}]}
# Volcano's default plugins with every eviction action.
EVICTING = {"actions": "enqueue, allocate, backfill, preempt, reclaim", "tiers": WITHOUT_TOPOLOGY["tiers"]}
# Reclaim decided by drf's hierarchical shares (HDRF; proportion may not share its tier), run on
# the shape's queues hung in a tree (shapes.in_a_hierarchy).
HDRF = {"actions": "enqueue, allocate, backfill, reclaim",
        "tiers": [WITHOUT_TOPOLOGY["tiers"][0],
                  {"plugins": [{"name": "drf", "enableHierarchy": True}, {"name": "predicates"}, {"name": "nodeorder"}]}]}
# Volcano's default configuration with the predicates' equivalence cache on.
CACHED = {"actions": "enqueue, allocate, backfill",
          "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
                    {"plugins": [{"name": "overcommit"}, {"name": "drf"},
                                 {"name": "predicates", "arguments": {"predicate.CacheEnable": True}},
                                 {"name": "proportion"}, {"name": "nodeorder"}]}]}
RUNS = [("plain", "default"), ("affinity", "default"), ("spread", "default"),
        ("hypernodes", "without-topology"), ("hypernodes", "topology-aware"),
        ("racks", "without-topology"), ("racks", "topology-aware"),
        ("elastic", "without-topology"), ("elastic", "topology-aware"),
        ("subgroups", "without-topology"), ("subgroups", "topology-aware"),
        ("overshare", "evicting"), ("priority", "evicting"),
        ("plain", "cached"), ("affinity", "cached"),
        ("plain-templated", "default"), ("plain-templated", "cached"),
        ("affinity-templated", "default"), ("affinity-templated", "cached")]


def _bundles() -> dict:
    return {"default": default_bundle(),
            "without-topology": build_bundle(config_from_document(WITHOUT_TOPOLOGY)),
            "topology-aware": build_bundle(config_from_document(TOPOLOGY_AWARE)),
            "evicting": build_bundle(config_from_document(EVICTING)),
            "hdrf": build_bundle(config_from_document(HDRF)),
            "cached": build_bundle(config_from_document(CACHED))}


def session_cpu(bundle, text: str, engine: str, repeat: int):
    """The least session CPU seconds (everything but loading) of ``repeat`` runs, that run's split
    (CPU seconds of open, each action and close), and the decisions."""
    best, best_parts, decisions = None, None, None
    for _ in range(repeat):
        parts, decisions = split(bundle, text, engine)
        del parts["load"]
        total = sum(parts.values())
        if best is None or total < best:
            best, best_parts = total, parts
    return best, best_parts, decisions


def describe_split(parts: dict[str, float], decisions) -> str:
    """Each phase's CPU seconds; an eviction action's with the evictions it made."""
    made: dict[str, int] = {}
    for _task, reason in decisions.evictions:
        made[reason] = made.get(reason, 0) + 1
    return " | ".join(f"{k} {v:.2f}" + (f" ({made[k]:,} evictions)" if k in made else "") for k, v in parts.items())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", nargs="+", type=int, default=[100, 250, 500])
    parser.add_argument("--shapes", nargs="+", default=None,
                        help="shape/config pairs to run, e.g. affinity/default (default: all)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--no-reference", action="store_true")
    args = parser.parse_args()
    bundles = _bundles()
    runs = RUNS if args.shapes is None else [tuple(s.split("/")) for s in args.shapes]
    for nodes in args.nodes:
        for shape, config in runs:
            objects = cluster_objects(nodes, shape)
            if config == "hdrf":
                objects = in_a_hierarchy(objects)
            text = json.dumps({"apiVersion": "v1", "kind": "List", "items": objects})
            pods = sum(1 for o in objects if o["kind"] == "Pod")
            fast, parts, decisions = session_cpu(bundles[config], text, "fast", args.repeat)
            line = (f"{nodes} nodes, {pods:,} pods, {shape}, {config}: fast {fast:.2f} s "
                    f"({len(decisions.binds):,} binds, {len(decisions.evictions):,} evictions)")
            if not args.no_reference:
                ref, ref_parts, ref_decisions = session_cpu(bundles[config], text, "reference", args.repeat)
                same = (ref_decisions.binds, ref_decisions.evictions) == (decisions.binds, decisions.evictions)
                line += f", reference {ref:.2f} s, {ref / fast:.1f}x, same decisions: {same}"
            print(line + "\n  fast: " + describe_split(parts, decisions), flush=True)
            if not args.no_reference:
                print("  reference: " + describe_split(ref_parts, ref_decisions), flush=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
