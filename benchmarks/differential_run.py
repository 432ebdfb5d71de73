"""The differential property at length: `python benchmarks/differential_run.py [--examples N]`.

tests/test_engines_agree.py runs a bounded number of generated clusters in
pytest; this runs many more (every configuration of tests/differential.py) and
prints how many agreed.  ``--placement``: clusters with inter-pod affinity and
topology spread constraints of every kind.  Any disagreement stops the run with hypothesis' smallest
failing cluster.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hypothesis import HealthCheck, given, settings  # noqa: E402

from tests.differential import GENERIC_CONFIGS, clusters, decisions  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", type=int, default=500, help="generated clusters per configuration")
    parser.add_argument("--max-nodes", type=int, default=30)
    parser.add_argument("--placement", action="store_true",
                        help="clusters whose jobs carry inter-pod affinity and topology spread constraints")
    args = parser.parse_args()
    for config in GENERIC_CONFIGS:
        seen = [0]
        started = time.perf_counter()

        @settings(max_examples=args.examples, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(objects=clusters(max_nodes=args.max_nodes, job_sizes=(1, 5) if args.placement else (1, 4),
                                placement=args.placement))
        def agree(objects: list[dict]) -> None:
            seen[0] += 1
            assert decisions(objects, config, "fast") == decisions(objects, config, "reference")

        agree()
        print(f"{config}: {seen[0]} generated clusters, identical decisions under both engines "
              f"({time.perf_counter() - started:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
