"""Replay speed: virtual seconds per wall second on the synthetic S and M clusters.

`python benchmarks/replay_bench.py S M --until 2h` cuts a trace from each
congested synthetic cluster (benchmarks/synthetic.py: its running and pending
gang jobs, run times drawn uniformly from 10 minutes to 1 hour, seed 1),
replays it with Volcano's configuration plus reclaim (one session per virtual
second, idle time skipped) and prints the sessions run and skipped, the wall time and the
virtual seconds per wall second.
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
from fumarole.runtime.bundles.bundle import build_bundle  # noqa: E402
from fumarole.runtime.ingest.kube import cluster_from_objects  # noqa: E402
from fumarole.runtime.ingest.scheduler_config import config_from_document  # noqa: E402
from fumarole.runtime.whatif.clock import ReplayOptions, replay  # noqa: E402
from fumarole.runtime.whatif.metrics import summarise  # noqa: E402
from fumarole.runtime.whatif.synth import cut_trace  # noqa: E402
from fumarole.runtime.whatif.trace import trace_from_document  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", default=["S"], choices=sorted(SIZES))
    parser.add_argument("--until", type=float, default=7200.0, help="virtual seconds to play (default 2 h)")
    args = parser.parse_args()
    bundle = build_bundle(config_from_document(RECLAIM, "reclaim.conf"))
    print("| cluster | virtual time | sessions run | skipped | wall time | virtual s per wall s | binds+evictions |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for size in args.sizes:
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


if __name__ == "__main__":
    main()
