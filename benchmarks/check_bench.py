"""How fast `fumarole check` is: `python benchmarks/check_bench.py [--repeat N]`.

*Cold* is what a CI step or a pre-commit hook pays: a new ``fumarole check
policies/volcano`` process (interpreter start, imports, the schema, parsing and
checking every file of the standard library).  *In process* is the check alone,
once everything is imported (what an editor integration or the service pays).
Medians of --repeat runs.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fumarole.runtime.bundles.environment import STDLIB  # noqa: E402
from fumarole.runtime.bundles.library import policy_files  # noqa: E402
from fumarole.runtime.authoring.check import _stdlib_from, check_paths  # noqa: E402


def cold(repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "fumarole.runtime.cli.main", "check", str(STDLIB)], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def in_process(repeat: int) -> float:
    times = []
    for _ in range(repeat):
        _stdlib_from.cache_clear()
        start = time.perf_counter()
        report = check_paths([str(STDLIB)], strict=True)
        times.append(time.perf_counter() - start)
        assert not report.diagnostics, report.diagnostics
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    files = policy_files(STDLIB)
    lines = sum(len(p.read_text().splitlines()) for p in files)
    print(f"standard library: {len(files)} policy files, {lines} lines")
    print(f"cold `fumarole check policies/volcano`: {cold(args.repeat) * 1000:.0f} ms")
    print(f"in process, --strict:                   {in_process(args.repeat) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
