"""A sweep's results.csv and summary.html: one plot per metric against the swept values."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from fumarole.runtime.whatif.outputs import write_csv
from fumarole.runtime.whatif.report import png_base64

METRICS = ("waitP50", "waitP95", "waitMax", "completionP95", "jobsCompleted", "evictions", "lostTaskSeconds",
           "fairness", "utilisation_cpu", "pingPongQueuePairs")


def write_sweep(out: Path, rows: list[dict[str, Any]], grid_keys: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "results.csv", rows)
    (out / "summary.html").write_text(render_summary(rows, grid_keys))


def _label(row: dict[str, Any], grid_keys: list[str]) -> str:
    return ", ".join(f"{k}={row[k]}" for k in grid_keys if row.get(k) not in (None, "")) or "(no grid key)"


def _plot(metric: str, rows: list[dict[str, Any]], grid_keys: list[str]) -> str:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    labels = list(dict.fromkeys(_label(r, grid_keys) for r in rows))
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    for series in dict.fromkeys((r["trace"], r["bundle"]) for r in rows):
        points = {_label(r, grid_keys): r.get(metric) for r in rows if (r["trace"], r["bundle"]) == series}
        xs = [i for i, label in enumerate(labels) if points.get(label) is not None]
        ax.plot(xs, [points[labels[i]] for i in xs], marker="o",
                label=f"{Path(series[1]).name} on {Path(series[0]).stem}")
    ax.set_xticks(range(len(labels)), labels, rotation=20, fontsize=8)
    ax.set_title(metric, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return png_base64(fig)


def render_summary(rows: list[dict[str, Any]], grid_keys: list[str]) -> str:
    columns = list(dict.fromkeys(k for r in rows for k in r))
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_text(r.get(c)))}</td>" for c in columns) + "</tr>"
                   for r in rows)
    plots = "".join(f"<h2>{m}</h2><img id='plot-{m}' alt='{m}' src='data:image/png;base64,{_plot(m, rows, grid_keys)}'>"
                    for m in METRICS)
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>fumarole sweep</title>"
            "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:.2em .5em;font-size:12px}</style></head><body>"
            f"<h1>fumarole sweep: {len(rows)} replays</h1>{plots}<h2>Results</h2>"
            f"<table><tr>{head}</tr>{body}</table></body></html>\n")


def _text(value: Any) -> str:
    if value is None:
        return ""
    return f"{value:.4g}" if isinstance(value, float) else str(value)
