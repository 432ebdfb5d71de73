"""What a `fumarole` process costs to start: `run` on the example cluster with a cold and a warm
compile cache, and the import of the CLI.

    python benchmarks/startup_bench.py [--repeat N] [--cluster FILE]

Each figure is the CPU time (user + system) of a fresh process, the best of N runs (the machine is
shared, so the best run is the one least disturbed).  Cold: a new, empty cache folder each run (Lark
builds the grammar's parse tables; the standard library is parsed, checked and compiled; both are
stored).  Library compiled: the compiled library removed, the parse tables kept (a new fumarole
version or an edited policy).  Warm: both cached.  The processes write Python's own bytecode (.pyc), as an installed fumarole has it: with
PYTHONDONTWRITEBYTECODE set, an editable checkout recompiles fumarole's modules at every start.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cpu_seconds(args: list[str], env: dict[str, str]) -> float:
    """CPU time of one child process running ``python args...`` from the repository."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, *args], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each kind (the best is shown)")
    parser.add_argument("--cluster", default="examples/cluster.yaml")
    options = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "FUMAROLE_NO_CACHE")}
    run = ["-m", "fumarole.runtime.cli.main", "run", options.cluster]
    with tempfile.TemporaryDirectory(prefix="fumarole-startup-") as scratch:
        cpu_seconds(["-c", "import fumarole.runtime.cli.main"], env)  # writes the .pyc files
        warm_env = {**env, "FUMAROLE_CACHE_DIR": str(Path(scratch) / "warm")}
        cold = []
        for i in range(options.repeat):
            cold.append(cpu_seconds(run, {**env, "FUMAROLE_CACHE_DIR": str(Path(scratch) / f"cold{i}")}))
        cpu_seconds(run, warm_env)
        warm = [cpu_seconds(run, warm_env) for _ in range(options.repeat)]
        recompiled = []
        for _ in range(options.repeat):
            for entry in Path(warm_env["FUMAROLE_CACHE_DIR"]).glob("*.library"):
                entry.unlink()  # the compiled library goes, Lark's parse tables stay
            recompiled.append(cpu_seconds(run, warm_env))
        imports = [cpu_seconds(["-c", "import fumarole.runtime.cli.main"], env) for _ in range(options.repeat)]
    print(f"fumarole run {options.cluster} (CPU, best of {options.repeat}; Python {sys.version.split()[0]}):")
    print(f"  cold cache (nothing cached yet)       {min(cold):.2f} s")
    print(f"  library compiled, parse tables cached {min(recompiled):.2f} s")
    print(f"  warm cache                            {min(warm):.2f} s")
    print(f"import fumarole.runtime.cli.main: {min(imports):.2f} s CPU")


if __name__ == "__main__":
    main()
