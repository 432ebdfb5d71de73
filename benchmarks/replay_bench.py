"""Replay speed: virtual seconds per wall second on the synthetic S and M clusters.

`python benchmarks/replay_bench.py S M --until 7200` cuts a trace from each
congested synthetic cluster (benchmarks/synthetic.py: its running and pending
gang jobs, run times drawn uniformly from 10 minutes to 1 hour, seed 1),
replays it with Volcano's configuration plus reclaim (one session per virtual
second, idle time skipped) and prints the sessions run and skipped, the wall time and the
virtual seconds per wall second.

`python benchmarks/replay_bench.py --examples` instead replays the example
trace examples/traces/two-queues.yaml with each example bundle and with
Volcano's configuration plus preempt or the standard library's other clock
readers (tdm, usage, rescheduling), one session per virtual second, skipping idle sessions and (for comparison) running every
period, and prints the CPU seconds of each replay in this process (the
bundle's compile not included).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.session_bench import RECLAIM  # noqa: E402
from benchmarks.synthetic import SIZES, cluster_objects  # noqa: E402
from fumarole.runtime.bundles.bundle import build_bundle, bundle_from_conf_text, bundle_from_volcano_conf, load_bundle  # noqa: E402
from fumarole.runtime.ingest.kube import cluster_from_objects  # noqa: E402
from fumarole.runtime.ingest.scheduler_config import config_from_document  # noqa: E402
from fumarole.runtime.whatif.clock import ReplayOptions, replay  # noqa: E402
from fumarole.runtime.whatif.metrics import summarise  # noqa: E402
from fumarole.runtime.whatif.synth import cut_trace  # noqa: E402
from fumarole.runtime.whatif.trace import load_trace, trace_from_document  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", help=f"cluster sizes, of {', '.join(sorted(SIZES))} (default S)")
    parser.add_argument("--until", type=float, default=7200.0, help="virtual seconds to play (default 2 h)")
    parser.add_argument("--examples", action="store_true", help="replay the example trace with the example bundles")
    args = parser.parse_args()
    if unknown := sorted(set(args.sizes) - set(SIZES)):
        parser.error(f"unknown size {unknown[0]!r}: choose from {', '.join(sorted(SIZES))}")
    if args.examples:
        examples()
        return
    bundle = build_bundle(config_from_document(RECLAIM, "reclaim.conf"))
    print("| cluster | virtual time | sessions run | skipped | wall time | virtual s per wall s | binds+evictions |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for size in args.sizes or ["S"]:
        cluster = cluster_from_objects(cluster_objects(size, "congested"))
        doc = cut_trace(cluster, f"{size}-congested", lambda rng: rng.uniform(600.0, 3600.0), seed=1)
        trace = trace_from_document(doc, Path(f"{size}.yaml"), "")
        random.seed(1)
        started = time.perf_counter()
        run = replay(trace, bundle, ReplayOptions(until=args.until))
        wall = time.perf_counter() - started
        summary = summarise(run)
        print(f"| {size} congested | {run.end:,.0f} s | {len(run.sessions):,} | {run.skipped:,} | {wall:,.1f} s | "
              f"{run.end / wall:,.3g} | {sum(j['tasks'] for j in run.jobs if j['started'] is not None):,} tasks "
              f"started, {summary['overall']['evictions']:,} evictions |")


# Volcano's configuration with preempt (its victims ordered by their start through a lambda) and with
# the standard library's other clock readers: tdm's revocable-zone window and evict period, usage's
# metrics age, rescheduling's interval (shuffle runs their victims).
PREEMPT = """actions: "enqueue, allocate, backfill, preempt"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]
"""
CLOCK_READERS = """actions: "enqueue, allocate, backfill, preempt, shuffle"
tiers:
- plugins:
  - {name: priority}
  - {name: gang}
  - {name: tdm, arguments: {tdm.revocable-zone.rz1: "09:00-17:00", tdm.evict.period: 1m}}
  - {name: usage}
  - {name: rescheduling, arguments: {strategies: [{name: lowNodeUtilization}]}}
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]
"""


def examples() -> None:
    trace = load_trace(ROOT / "examples/traces/two-queues.yaml")
    bundles = {"two-queues/volcano-scheduler.conf": bundle_from_volcano_conf(ROOT / "examples/two-queues/volcano-scheduler.conf"),
               "site-min-runtime": load_bundle(ROOT / "examples/site-min-runtime"),
               "preempt": bundle_from_conf_text(PREEMPT, "preempt.conf"),
               "tdm, usage, rescheduling": bundle_from_conf_text(CLOCK_READERS, "clock-readers.conf")}
    print("| trace | bundle | mode | virtual time | sessions run | skipped | CPU | virtual s per CPU s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, bundle in bundles.items():
        for mode, skip in (("skipping", True), ("every period", False)):
            started = time.process_time()
            run = replay(trace, bundle, ReplayOptions(skip_idle=skip))
            cpu = time.process_time() - started
            print(f"| two-queues | {name} | {mode} | {run.end:,.0f} s | {len(run.sessions):,} | {run.skipped:,} | "
                  f"{cpu:.2f} s | {run.end / cpu:,.0f} |")


if __name__ == "__main__":
    main()
