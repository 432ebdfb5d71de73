"""A replay's output folder: metrics.json, CSV time series (queues, nodes, jobs) and report.html.

The CSVs carry a ``bundle`` column, so a ``--compare`` run writes both bundles
into the same files and pandas users can group by it.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from fumarole.runtime.whatif.metrics import Recording, summarise

CSV_TABLES = {"queues": "queues", "nodes": "nodes", "jobs": "jobs"}


def write_outputs(out: Path, runs: list[Recording]) -> dict[str, Any]:
    """Write every output of one or two replays (the second, if any, is the comparison); metrics.json's content."""
    from fumarole.runtime.whatif.report import write_report  # plotly.js only when a report is written

    out.mkdir(parents=True, exist_ok=True)
    summaries = [summarise(run) for run in runs]
    metrics = summaries[0] if len(runs) == 1 else {**summaries[0], "compare": summaries[1]}
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n")
    for name, attribute in CSV_TABLES.items():
        write_csv(out / f"{name}.csv", [{"bundle": run.bundle, **row} for run in runs for row in getattr(run, attribute)])
    write_report(out / "report.html", runs, summaries)
    return metrics


def write_csv(path: Path, rows: list[dict]) -> None:
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns))
        writer.writeheader()
        writer.writerows(rows)
