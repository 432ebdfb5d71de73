"""Whole `fumarole run` processes on synthetic clusters written as JSON, as YAML, and as YAML with
one anchor: CPU seconds, peak memory, and whether the decisions are byte-identical.

`python benchmarks/whole_run_bench.py S M L XL --out /work/bench` writes each size
(benchmarks/synthetic.py, roomy shape) once as SIZE.json, SIZE.yaml (block style, as kubectl
prints it) and SIZE-anchor.yaml (the same with the first node's labels anchored and the second's
an alias), then runs `fumarole run FILE -o json` on each in a fresh process and prints the child's
user+system CPU seconds and peak resident memory (the process's whole life: interpreter, imports,
loading, the session, writing the decisions).  The clusters are written by a process of their
own: on Linux a child's peak resident memory counts from the peak of the process that started it
(the figure is carried across exec), so a bench process that had built XL in memory made every
child it measured report that size.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.synthetic import SIZES, cluster_objects  # noqa: E402


def form_paths(size: str, out: Path) -> dict[str, Path]:
    """Where each form of one size is written."""
    return {"JSON": out / f"{size}.json", "YAML": out / f"{size}.yaml", "YAML, one anchor": out / f"{size}-anchor.yaml"}


def write_forms(size: str, out: Path) -> None:
    """The cluster as JSON, YAML and YAML with one anchor (kept if already written)."""
    import yaml

    paths = form_paths(size, out)
    if all(p.exists() for p in paths.values()):
        return
    doc = {"apiVersion": "v1", "kind": "List", "items": cluster_objects(size)}
    paths["JSON"].write_text(json.dumps(doc))
    text = yaml.dump(doc, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False)
    paths["YAML"].write_text(text)
    first = doc["items"][0]["metadata"]["labels"]
    doc["items"][1]["metadata"]["labels"] = first  # yaml.dump writes a shared object as an anchor and an alias
    paths["YAML, one anchor"].write_text(yaml.dump(doc, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
                                                   sort_keys=False))


def run(path: Path) -> tuple[float, float, bytes]:
    """CPU seconds, peak MB and the decisions of one `fumarole run` process."""
    child = subprocess.Popen([sys.executable, "-m", "fumarole.runtime.cli.main", "run", str(path), "-o", "json"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    output = child.stdout.read()
    _pid, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"fumarole run {path} failed")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="+", choices=sorted(SIZES))
    parser.add_argument("--out", type=Path, default=Path("/tmp/fumarole-bench"))
    parser.add_argument("--write-only", action="store_true",
                        help="write the clusters and stop (the measuring process runs this in a child)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.write_only:
        for size in args.sizes:
            write_forms(size, args.out)
        return
    subprocess.run([sys.executable, __file__, *args.sizes, "--out", str(args.out), "--write-only"], check=True)
    print("| size | form | whole run (CPU) | x JSON | peak memory | decisions |")
    print("| --- | --- | --- | --- | --- | --- |")
    for size in args.sizes:
        base = None
        for form, path in form_paths(size, args.out).items():
            cpu, peak, output = run(path)
            base = base or (cpu, output)
            same = "same" if output == base[1] else "DIFFERENT"
            print(f"| {size} | {form} | {cpu:.2f} s | {cpu / base[0]:.2f}x | {peak:,.0f} MB | {same} |", flush=True)


if __name__ == "__main__":
    main()
