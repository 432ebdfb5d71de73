"""Session time per action on synthetic clusters: `python benchmarks/session_bench.py [S|M ...]`.

Prints, for each size and configuration, the time to load the cluster, open
the session (plugins' open hooks) and run each action, median of --repeat runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.synthetic import SHAPES, SIZES, cluster_objects  # noqa: E402
from fumarole.runtime.bundles.bundle import build_bundle, default_bundle  # noqa: E402
from fumarole.runtime.ingest.scheduler_config import config_from_document  # noqa: E402
from fumarole.runtime.ingest.kube import cluster_from_objects, load_cluster  # noqa: E402
from fumarole.runtime.framework.session import Session  # noqa: E402

RECLAIM = {"actions": "enqueue, allocate, backfill, reclaim",
           "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
                     {"plugins": [{"name": "overcommit"}, {"name": "drf"}, {"name": "predicates"},
                                  {"name": "proportion"}, {"name": "nodeorder"}, {"name": "binpack"}]}]}


def time_session(bundle, cluster) -> dict[str, float]:
    times: dict[str, float] = {}
    start = time.perf_counter()
    session = Session(bundle, cluster, now=0.0)
    session.open()
    times["open"] = time.perf_counter() - start
    for name in bundle.config.actions:
        start = time.perf_counter()
        hooks = bundle.actions[name].instantiate(session, session.H, bundle.action_arguments.get(name, {}))
        hooks["execute"]()
        times[name] = time.perf_counter() - start
    start = time.perf_counter()
    decisions = session.close()
    times["close"] = time.perf_counter() - start
    times["binds"] = len(decisions.binds)
    times["evictions"] = len(decisions.evictions)
    return times


def _timed(function, *args) -> float:
    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sizes", nargs="*", default=["S"], choices=sorted(SIZES))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--shape", action="append", choices=sorted(SHAPES),
                        help="cluster shape(s) (default: both)")
    parser.add_argument("--load-only", action="store_true", help="only time loading the cluster, no sessions")
    args = parser.parse_args()
    configs = {"default": default_bundle(), "with-reclaim": build_bundle(config_from_document(RECLAIM))}
    for size in args.sizes:
        for shape in args.shape or sorted(SHAPES, reverse=True):
            objects = cluster_objects(size, shape)
            start = time.perf_counter()
            cluster = cluster_from_objects(objects)
            load = time.perf_counter() - start
            text = yaml.dump_all(objects, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper))
            parse = statistics.median(_timed(load_cluster, text) for _ in range(args.repeat))
            spec = SIZES[size]
            print(f"size {size} ({shape}): {spec['nodes']} nodes, {spec['jobs'] * spec['pods_per_job']} pods in "
                  f"{spec['jobs']} jobs, {spec['queues']} queues; cluster load {load * 1000:.0f} ms; "
                  f"from YAML ({len(text) / 1e6:.1f} MB, as `fumarole run` reads it) {parse * 1000:.0f} ms")
            for label, bundle in configs.items() if not args.load_only else ():
                runs = [time_session(bundle, cluster) for _ in range(args.repeat)]
                keys = ["open"] + list(bundle.config.actions) + ["close"]
                parts = [f"{k} {statistics.median(r[k] for r in runs) * 1000:.0f} ms" for k in keys]
                total = statistics.median(sum(r[k] for k in keys) for r in runs)
                print(f"  {label:13s} total {total * 1000:.0f} ms | " + " | ".join(parts)
                      + f" | binds {runs[0]['binds']}, evictions {runs[0]['evictions']}")


if __name__ == "__main__":
    main()
