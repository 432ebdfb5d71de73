"""CPU seconds of each action of one fast-engine session, per cluster file:
`python benchmarks/allocate_bench.py CLUSTER.json [...]` (e.g. the synthetic M and M2).

The node engine's figure (the cost of node-level rules in allocate) is the
allocate column; loading and opening are printed for scale.  Process CPU time,
the least of --repeat runs (a shared machine inflates even CPU time at times).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.session_bench import split  # noqa: E402
from fumarole.runtime.bundles.bundle import default_bundle  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("clusters", nargs="+", type=Path)
    parser.add_argument("--engine", default="fast", choices=("fast", "reference"))
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    bundle = default_bundle()
    for path in args.clusters:
        text = path.read_text()
        runs = [split(bundle, text, args.engine) for _ in range(args.repeat)]
        decisions = runs[0][1]
        parts = {name: min(run[0][name] for run in runs) for name in runs[0][0]}
        binds = len(decisions.binds)
        per_task = parts.get("allocate", 0.0) / binds * 1e6 if binds else 0.0
        print(f"{path.name}: " + " | ".join(f"{k} {v:.2f}" for k, v in parts.items())
              + f" | binds {binds:,} ({per_task:.0f} us of allocate per bind)", flush=True)


if __name__ == "__main__":
    main()
