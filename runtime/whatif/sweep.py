"""Sweeps: every combination of traces, bundles and plugin-argument grids, each one replay.

A sweep file (docs/traces.md) names traces, bundles and a grid of plugin
arguments by their configuration key (``minRuntime: [10m, 1h, 3h]``).  A
grid key applies to the bundles whose plugins declare it; a bundle that
declares none of the keys runs once per trace.  The replays run on a local
process pool (``concurrent.futures``) or on a Dask cluster
(``dask.distributed``: an address, or ``local`` for a LocalCluster); each
worker reads the trace and compiles the bundle itself, by path, so paths
must be readable where the workers run.
"""

from __future__ import annotations

import itertools
import math
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from fumarole.runtime.ingest.yamlpos import load_file
from fumarole.runtime.whatif import trace_errors
from fumarole.runtime.whatif.clock import ReplayOptions
from fumarole.runtime.whatif.trace import _TraceReader, seconds

_KEYS = ("apiVersion", "kind", "metadata", "traces", "bundles", "grid", "options")
MAX_SWEEP_RUNS = 10_000  # replays one sweep file may ask for (traces x bundles x grid points), checked up front
_OPTIONS = {"period": "period", "until": "until", "grace": "grace", "pingpongWindow": "pingpong_window",
            "settle": "settle", "maxWall": "max_wall"}


@dataclass(frozen=True)
class SweepRun:
    """One replay of a sweep (picklable: paths and plain values)."""

    trace: str
    bundle: str
    arguments: tuple[tuple[str, Any], ...]
    options: ReplayOptions


def load_sweep(path: Path) -> list[SweepRun]:
    """Every combination the sweep file names; FumaroleError (T004, K/T codes of its traces) when malformed."""
    doc, text = load_file(path, "T001")
    reader = _TraceReader(str(path), text)
    if not isinstance(doc, dict) or doc.get("kind") != "Sweep":
        reader.report(trace_errors.not_a_sweep(reader.file, reader.at(doc if isinstance(doc, dict) else None)))
        raise reader.error()
    for key in doc:
        if key not in _KEYS:
            reader.report(trace_errors.unknown_sweep_key(reader.file, reader.at_key(doc, key), key, _KEYS))
    lists = {}
    for key in ("traces", "bundles"):
        value = doc.get(key)
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            reader.report(trace_errors.sweep_paths_not_a_list(reader.file, reader.at(doc, key), key))
            value = []
        lists[key] = [str((path.parent / v)) for v in value]
    grid = doc.get("grid") or {}
    if not isinstance(grid, dict) or not all(isinstance(v, list) and v for v in grid.values()):
        reader.report(trace_errors.grid_shape(reader.file, reader.at(doc, "grid")))
        grid = {}
    options = _options(doc.get("options") or {}, reader)
    runs = len(lists["traces"]) * len(lists["bundles"]) * math.prod(len(values) for values in grid.values())
    if runs > MAX_SWEEP_RUNS:
        at = reader.at(doc, "grid" if grid else "traces")
        reader.report(trace_errors.too_many_replays(reader.file, at, runs, MAX_SWEEP_RUNS))
    if reader.diagnostics:
        raise reader.error()
    points = [tuple(zip(grid, values)) for values in itertools.product(*grid.values())] or [()]
    return [SweepRun(trace, bundle, point, options)
            for trace in lists["traces"] for bundle in lists["bundles"] for point in points]


def _options(raw: Any, reader: _TraceReader) -> ReplayOptions:
    if not isinstance(raw, dict):
        reader.report(trace_errors.sweep_options_not_a_mapping(reader.file, reader.at(raw)))
        return ReplayOptions()
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key in _OPTIONS:
            parsed = seconds(value)
            if parsed is None or (parsed == 0 and key in ("period", "maxWall")):
                at = reader.at(raw, key)
                reader.report(trace_errors.bad_sweep_duration(reader.file, at, key, value, zero=parsed == 0))
            values[_OPTIONS[key]] = parsed
        elif key == "onEvict" and value in ("restart", "resume"):
            values["on_evict"] = value
        else:
            reader.report(trace_errors.unknown_sweep_option(reader.file, reader.at_key(raw, key), key))
    return ReplayOptions(**values)


def run_one(run: SweepRun) -> dict[str, Any]:
    """One replay, summarised as one CSV row (runs in a worker process)."""
    from fumarole.runtime.bundles.bundle import override_arguments
    from fumarole.runtime.whatif.inputs import load_any_bundle
    from fumarole.runtime.whatif.clock import replay
    from fumarole.runtime.whatif.metrics import summarise
    from fumarole.runtime.whatif.trace import load_trace

    bundle, used = override_arguments(load_any_bundle(run.bundle), dict(run.arguments))
    summary = summarise(replay(load_trace(Path(run.trace)), bundle, run.options))
    overall = summary["overall"]
    row: dict[str, Any] = {"trace": run.trace, "bundle": run.bundle}
    row.update({key: (value if key in used else "") for key, value in run.arguments})
    row.update({"jobsCompleted": overall["jobsCompleted"], "jobsNeverStarted": overall["jobsNeverStarted"],
                "waitP50": overall["waitSeconds"]["p50"], "waitP95": overall["waitSeconds"]["p95"],
                "waitMax": overall["waitSeconds"]["max"], "completionP95": overall["completionSeconds"]["p95"],
                "evictions": overall["evictions"], "lostTaskSeconds": overall["lostTaskSeconds"],
                "fairness": overall["fairness"],
                **{f"utilisation_{d}": v for d, v in overall["utilisation"].items()},
                "pingPongQueuePairs": len(summary["pingPong"]["queues"]),
                "virtualSeconds": summary["virtualSeconds"], "wallSeconds": summary["wallSeconds"]})
    return row


def distinct(runs: list[SweepRun]) -> list[SweepRun]:
    """Drop the runs that would repeat another: a bundle that declares no grid key runs once per trace.

    Every combination of arguments is applied here once, so that one a bundle refuses (a value of
    the wrong type, switches Volcano refuses together) is reported before any replay starts, not
    from inside a worker."""
    from fumarole.runtime.bundles.bundle import Bundle, override_arguments
    from fumarole.runtime.whatif.inputs import load_any_bundle

    loaded: dict[str, Bundle] = {}
    declared: dict[tuple[str, tuple], set[str]] = {}
    seen, out = set(), []
    for run in runs:
        if run.bundle not in loaded:
            loaded[run.bundle] = load_any_bundle(run.bundle)
        if (run.bundle, run.arguments) not in declared:
            declared[run.bundle, run.arguments] = override_arguments(loaded[run.bundle], dict(run.arguments))[1]
        used = declared[run.bundle, run.arguments]
        key = (run.trace, run.bundle, tuple(kv for kv in run.arguments if kv[0] in used))
        if key not in seen:
            seen.add(key)
            out.append(run)
    return out


def run_sweep(runs: list[SweepRun], dask: str | None = None, workers: int | None = None,
              progress: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """Every run's row, in the sweep's order, on a process pool or a Dask cluster."""
    order = {run: i for i, run in enumerate(runs)}
    rows: dict[int, dict[str, Any]] = {}
    if dask is None:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(run_one, run): run for run in runs}
            for future in as_completed(futures):
                rows[order[futures[future]]] = future.result()
                if progress is not None:
                    progress(len(rows))
    else:
        from dask.distributed import Client, LocalCluster
        from dask.distributed import as_completed as dask_completed

        cluster = LocalCluster(n_workers=workers or 2, threads_per_worker=1, processes=True,
                               dashboard_address=None) if dask == "local" else None
        try:
            with Client(cluster if cluster is not None else dask) as client:
                futures = client.map(run_one, runs, pure=False)
                index = {future.key: i for i, future in enumerate(futures)}
                for future in dask_completed(futures):
                    rows[index[future.key]] = future.result()
                    if progress is not None:
                        progress(len(rows))
        finally:
            if cluster is not None:
                cluster.close()
    return [rows[i] for i in range(len(runs))]

