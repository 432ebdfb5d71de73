"""Long fuzzing runs of the input front doors: `python benchmarks/fuzz_inputs.py [--examples N]`.

Runs the properties of tests/test_fuzz_inputs.py (cluster documents by structure and by text,
session bodies as YAML and JSON, bundle archives) with N inputs each instead of the test
suite's 25, and prints, per property, the inputs tried, the outcomes (clean runs and each
diagnostic code) and every failure: an exception other than a diagnostic, or an input slower
than the bound.  Exit status 1 when anything failed.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fuzz_properties import PROPERTIES  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def run(name: str, check: Callable[..., str], strategies: tuple, examples: int) -> tuple[int, list[str]]:
    outcomes: collections.Counter = collections.Counter()
    failures: list[str] = []

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.tuples(*strategies))
    def property_(args):
        try:
            outcomes[check(*args)] += 1
        except Exception as exc:  # noqa: BLE001 - counted, shown, and the run goes on
            outcomes["FAILURE"] += 1
            failures.append(f"{type(exc).__name__}: {exc!s:.200} <- {args!r:.300}")

    started = time.perf_counter()
    property_()
    tried = sum(outcomes.values())
    spread = ", ".join(f"{code} {count}" for code, count in outcomes.most_common())
    print(f"{name}: {tried} inputs in {time.perf_counter() - started:.0f} s, {len(failures)} failures ({spread})")
    for failure in failures[:10]:
        print(f"    {failure}")
    return tried, failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000, help="inputs per property (default 2000)")
    args = parser.parse_args()
    total, failed = 0, 0
    for name, (check, strategies) in PROPERTIES.items():
        tried, failures = run(name, check, strategies, args.examples)
        total, failed = total + tried, failed + len(failures)
    print(f"total: {total} inputs, {failed} failures")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
