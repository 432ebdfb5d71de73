"""CPU seconds of each action of one fast-engine session, per cluster file:
`python benchmarks/allocate_bench.py CLUSTER.json [...]` (e.g. the synthetic M and M2).

The node engine's figure (the cost of node-level rules in allocate) is the
allocate column; loading and opening are printed for scale.  One run each,
process CPU time (steady on a shared machine, unlike wall time).
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
    args = parser.parse_args()
    bundle = default_bundle()
    for path in args.clusters:
        parts, decisions = split(bundle, path.read_text(), args.engine)
        binds = len(decisions.binds)
        per_task = parts.get("allocate", 0.0) / binds * 1e6 if binds else 0.0
        print(f"{path.name}: " + " | ".join(f"{k} {v:.2f}" for k, v in parts.items())
              + f" | binds {binds:,} ({per_task:.0f} us of allocate per bind)", flush=True)


if __name__ == "__main__":
    main()
