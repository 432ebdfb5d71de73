"""Memory of a process running session after session, as `serve` and `replay` do:
`python benchmarks/session_memory.py [--size S] [--sessions 300]`.

Each round loads the synthetic cluster and runs one session of Volcano's default
configuration; every 50 rounds it prints the objects the cycle collector tracks, the
peak resident memory and the full collections so far.  Bounded figures mean the
sessions' cycles are collected (runtime/ingest/gc_pause.py).
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.synthetic import SIZES, cluster_objects  # noqa: E402
from fumarole.runtime.bundles.bundle import default_bundle  # noqa: E402
from fumarole.runtime.framework.lifecycle import new_session, run_session  # noqa: E402
from fumarole.runtime.ingest.kube import load_cluster  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", default="S", choices=sorted(SIZES))
    parser.add_argument("--sessions", type=int, default=300)
    args = parser.parse_args()
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": cluster_objects(args.size)})
    bundle = default_bundle()
    for done in range(1, args.sessions + 1):
        run_session(new_session(bundle, load_cluster(text, f"{args.size}.json"), now=0.0))
        if done % 50 == 0 or done == args.sessions:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
            print(f"{done} sessions: {len(gc.get_objects()):,} tracked objects, peak {peak} MB, "
                  f"{gc.get_stats()[2]['collections']} full collections", flush=True)


if __name__ == "__main__":
    main()
