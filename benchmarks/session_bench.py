"""Sessions on synthetic clusters: `python benchmarks/session_bench.py [S M L M2 ...]`.

For each size (default configuration, `roomy` shape unless --shape): the whole
`fumarole run` process on the cluster written as JSON and as YAML (wall and CPU
seconds, interpreter start and imports included), then in process the split of
the fast engine (load, open, each action, close) and the reference engine's
session time, with the speedup.  CPU seconds are the figure to compare on a
shared machine; wall seconds are what a user waits.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml  # noqa: E402

from benchmarks.synthetic import SHAPES, SIZES, cluster_objects  # noqa: E402
from fumarole.runtime.bundles.bundle import build_bundle, default_bundle  # noqa: E402
from fumarole.runtime.framework.lifecycle import new_session  # noqa: E402
from fumarole.runtime.framework.session import Session  # noqa: E402
from fumarole.runtime.ingest.gc_pause import settle  # noqa: E402
from fumarole.runtime.ingest.kube import load_cluster  # noqa: E402
from fumarole.runtime.ingest.scheduler_config import config_from_document  # noqa: E402

RECLAIM = {"actions": "enqueue, allocate, backfill, reclaim",
           "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
                     {"plugins": [{"name": "overcommit"}, {"name": "drf"}, {"name": "predicates"},
                                  {"name": "proportion"}, {"name": "nodeorder"}, {"name": "binpack"}]}]}
# The default configuration with the GPU plugins (for --shape gpu).
GPU = {"actions": "enqueue, allocate, backfill",
       "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
                 {"plugins": [{"name": "overcommit"}, {"name": "drf"}, {"name": "predicates"},
                              {"name": "proportion"}, {"name": "nodeorder"},
                              {"name": "deviceshare", "arguments": {"deviceshare.GPUSharingEnable": True}},
                              {"name": "numa-aware"}]}]}
CONFIGS = {"default": None, "with-reclaim": RECLAIM, "gpu": GPU}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def whole_process(path: Path, engine: str, config: Path | None = None) -> tuple[float, float]:
    """Wall and CPU seconds of `fumarole run PATH -o json [--config CONFIG]` in a new process."""
    cpu, wall = _children_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-m", "fumarole.runtime.cli.main", "run", str(path), "-o", "json",
                    "--engine", engine, *(["--config", str(config)] if config else [])],
                   check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - wall, _children_cpu() - cpu


def timed(fn):
    cpu, wall = time.process_time(), time.perf_counter()
    value = fn()
    return value, time.perf_counter() - wall, time.process_time() - cpu


def split(bundle, text: str, engine: str) -> tuple[dict[str, float], object]:
    """CPU seconds of each phase of one session, in process."""
    parts: dict[str, float] = {}
    settle()  # as a fresh process would: nothing left of the runs before to collect
    cluster, _, parts["load"] = timed(lambda: load_cluster(text, "cluster.json"))
    session, _, parts["open"] = timed(lambda: _opened(bundle, cluster, engine))
    phase = {"name": None, "cpu": 0.0}

    def entered(name: str, _placed: int) -> None:  # the session reports each action as it starts
        if name != phase["name"]:
            now = time.process_time()
            if phase["name"] is not None:
                parts[phase["name"]] = now - phase["cpu"]
            phase["name"], phase["cpu"] = name, now

    session.progress = entered
    session.run_actions()  # as `fumarole run` runs them (the collector paused)
    parts[phase["name"]] = time.process_time() - phase["cpu"]
    decisions, _, parts["close"] = timed(session.close)
    return parts, decisions


def loading(bundle, path: Path) -> dict[str, float]:
    """CPU seconds of reading a cluster file, building the session on it and opening it
    (the best of three: loading is short enough for a neighbour's burst to show)."""
    best: dict[str, float] | None = None
    for _ in range(3):
        parts: dict[str, float] = {}
        settle()
        cluster, _, parts["load"] = timed(lambda: load_cluster(path.read_text(), path.name))
        session, _, parts["session"] = timed(lambda: new_session(bundle, cluster, now=0.0))
        _, _, parts["open"] = timed(session.open)
        parts["total"] = sum(parts.values())
        best = parts if best is None or parts["total"] < best["total"] else best
        del cluster, session
    return best


def _opened(bundle, cluster, engine: str) -> Session:
    session = new_session(bundle, cluster, now=0.0, engine=engine)
    session.open()
    return session


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sizes", nargs="*", default=["S", "M", "L"], choices=sorted(SIZES))
    parser.add_argument("--shape", default="roomy", choices=sorted(SHAPES))
    parser.add_argument("--config", default="default", choices=sorted(CONFIGS))
    parser.add_argument("--load-only", action="store_true",
                        help="only time loading the cluster, building its session and opening it "
                             "(JSON and YAML, in process), no actions")
    parser.add_argument("--reference", nargs="*", default=["S", "M"], metavar="SIZE",
                        help="sizes on which to run the reference engine too, for the speedup (default S M)")
    args = parser.parse_args()
    document = CONFIGS[args.config]
    bundle = default_bundle() if document is None else build_bundle(config_from_document(document))
    with tempfile.TemporaryDirectory() as folder:
        config = None
        if document is not None:  # the whole process runs the same configuration as the split
            config = Path(folder, "volcano-scheduler.conf")
            config.write_text(yaml.safe_dump(document))
        for size in args.sizes:
            spec = SIZES[size]
            objects = cluster_objects(size, args.shape)
            as_json, as_yaml = Path(folder, f"{size}.json"), Path(folder, f"{size}.yaml")
            as_json.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
            as_yaml.write_text(yaml.dump_all(objects, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper)))
            print(f"size {size} ({args.shape}, {args.config}): {spec['nodes']:,} nodes, "
                  f"{spec['jobs'] * spec['pods_per_job']:,} pods, {spec['queues']} queues", flush=True)
            if args.load_only:
                for label, path in (("json", as_json), ("yaml", as_yaml)):
                    print(f"  {label}, CPU s: " + " | ".join(f"{k} {v:.2f}" for k, v in loading(bundle, path).items()),
                          flush=True)
                continue
            for label, path in (("json", as_json), ("yaml", as_yaml)):
                wall, cpu = whole_process(path, "fast", config)
                print(f"  fumarole run ({label}): {wall:.2f} s wall, {cpu:.2f} s CPU", flush=True)
            parts, decisions = split(bundle, as_json.read_text(), "fast")
            session_cpu = sum(v for k, v in parts.items() if k != "load")
            print("  fast engine, CPU s: " + " | ".join(f"{k} {v:.2f}" for k, v in parts.items())
                  + f" | session {session_cpu:.2f} | binds {len(decisions.binds):,}, "
                    f"evictions {len(decisions.evictions):,}", flush=True)
            if size in args.reference:
                ref_parts, ref_decisions = split(bundle, as_json.read_text(), "reference")
                ref_cpu = sum(v for k, v in ref_parts.items() if k != "load")
                same = (ref_decisions.binds, ref_decisions.evictions) == (decisions.binds, decisions.evictions)
                print(f"  reference engine: session {ref_cpu:.2f} s CPU; fast engine speedup "
                      f"{ref_cpu / session_cpu:.1f}x; same binds and evictions: {same}", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
