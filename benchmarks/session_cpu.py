"""CPU time of one S-size session per shape: `python benchmarks/session_cpu.py [ROOT ...]`.

Process CPU time is steadier than wall time on a shared machine, so this is the
figure to compare two checkouts by (each ROOT a checkout with its own install,
e.g. before and after a change to the compiler); without ROOT it measures this
one.  Prints the median and the minimum of --repeat sessions.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def measure(repeat: int) -> str:
    sys.path.insert(0, str(HERE))
    from benchmarks.synthetic import cluster_objects
    from fumarole.runtime.bundles.bundle import default_bundle
    from fumarole.runtime.framework.lifecycle import new_session
    from fumarole.runtime.ingest.kube import cluster_from_objects

    bundle = default_bundle()
    parts = []
    for shape in ("roomy", "congested"):
        cluster = cluster_from_objects(cluster_objects("S", shape))
        times = []
        for _ in range(repeat):
            start = time.process_time()
            session = new_session(bundle, cluster, now=0.0)  # the operations themselves: older checkouts have them too
            session.open()
            session.run_actions()
            session.close()
            times.append(time.process_time() - start)
        parts.append(f"S {shape}: median {statistics.median(times) * 1000:.0f} ms, min {min(times) * 1000:.0f} ms")
    return " | ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("roots", nargs="*", help="checkouts to compare, each run with its own .venv")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if not args.roots:
        print(measure(args.repeat))
        return
    for root in args.roots:
        python = Path(root) / ".venv/bin/python"
        out = subprocess.run([str(python), str(Path(root) / "benchmarks/session_cpu.py"), "--repeat",
                              str(args.repeat)], capture_output=True, text=True, check=True).stdout.strip()
        print(f"{root}: {out}")


if __name__ == "__main__":
    main()
