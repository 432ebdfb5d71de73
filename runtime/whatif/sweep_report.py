"""A sweep's results.csv and summary.html: one interactive chart per metric against the swept values.

Each chart has a labelled x axis (the grid point: the swept arguments) and y axis (the metric, with
its unit); a replay with no swept argument -- the baseline a sweep usually includes -- is drawn as
a dashed horizontal line across the chart, not as one more grid value.  Paths are shown relative
to the working folder and normalised.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

from fumarole.runtime.whatif.charts import chart, color, page
from fumarole.runtime.whatif.outputs import write_csv

METRICS = ("waitP50", "waitP95", "waitMax", "completionP95", "jobsCompleted", "evictions", "lostTaskSeconds",
           "fairness", "utilisation_cpu", "pingPongQueuePairs")
# metric -> (title, y axis label, whole numbers?)
_LABELS: dict[str, tuple[str, str, bool]] = {
    "waitP50": ("Median job wait", "wait p50 (s)", False),
    "waitP95": ("95th-percentile job wait", "wait p95 (s)", False),
    "waitMax": ("Longest job wait", "wait max (s)", False),
    "completionP95": ("95th-percentile job completion time", "completion p95 (s)", False),
    "jobsCompleted": ("Jobs completed", "jobs", True),
    "evictions": ("Evictions", "evictions", True),
    "lostTaskSeconds": ("Work lost to evictions", "lost task time (s)", False),
    "fairness": ("Fairness (Jain's index, time-weighted)", "fairness (0-1)", False),
    "utilisation_cpu": ("CPU utilisation", "used / allocatable CPU", False),
    "pingPongQueuePairs": ("Queue pairs in ping-pong", "queue pairs", True),
}


def write_sweep(out: Path, rows: list[dict[str, Any]], grid_keys: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "results.csv", rows)
    (out / "summary.html").write_text(render_summary(rows, grid_keys))


def shown_path(path: str) -> str:
    """A path as a reader wants it: relative to the working folder when under it, normalised."""
    normal = os.path.normpath(path)
    try:
        relative = os.path.relpath(normal)
    except ValueError:  # another drive
        return normal
    return normal if relative.startswith("..") else relative


def _grid_point(row: dict[str, Any], grid_keys: list[str]) -> str | None:
    """The swept arguments of a row, or None for a replay with none (a baseline)."""
    return ", ".join(f"{k}={row[k]}" for k in grid_keys if row.get(k) not in (None, "")) or None


def _series_name(series: tuple[str, str]) -> str:
    trace, bundle = series
    return f"{Path(shown_path(bundle)).name or shown_path(bundle)} on {Path(trace).stem}"


def _figure(metric: str, rows: list[dict[str, Any]], grid_keys: list[str]) -> dict[str, Any]:
    title, y_title, whole = _LABELS.get(metric, (metric, metric, False))
    points = [p for p in dict.fromkeys(_grid_point(r, grid_keys) for r in rows) if p is not None]
    data: list[dict[str, Any]] = []
    shapes, annotations = [], []
    for i, series in enumerate(dict.fromkeys((r["trace"], r["bundle"]) for r in rows)):
        mine = [r for r in rows if (r["trace"], r["bundle"]) == series and r.get(metric) is not None]
        swept = [(p, r[metric]) for r in mine if (p := _grid_point(r, grid_keys)) is not None]
        if swept:
            data.append({"type": "scatter", "mode": "lines+markers", "x": [p for p, _ in swept],
                         "y": [v for _, v in swept], "name": _series_name(series), "line": {"color": color(i)}})
        for baseline in (r for r in mine if _grid_point(r, grid_keys) is None):
            shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": baseline[metric],
                           "y1": baseline[metric], "line": {"dash": "dash", "color": color(i), "width": 2}})
            annotations.append({"xref": "paper", "x": 1, "xanchor": "right", "y": baseline[metric], "yanchor": "bottom",
                                "showarrow": False, "text": f"baseline: {html.escape(_series_name(series))}"})
    if not data and not shapes:
        annotations.append({"text": "no values", "showarrow": False, "xref": "paper", "yref": "paper",
                            "x": 0.5, "y": 0.5, "font": {"size": 16}})
    y_axis: dict[str, Any] = {"title": {"text": y_title}, "rangemode": "tozero"}
    if whole:
        y_axis.update(tickformat=",d", dtick=max(1, round(max([1, *[v for t in data for v in t["y"]]]) / 8)))
    return {"data": data, "layout": {
        "title": {"text": title}, "height": 380, "margin": {"t": 50, "b": 90, "l": 70, "r": 20},
        "xaxis": {"title": {"text": "swept arguments (" + ", ".join(grid_keys) + ")" if grid_keys else "replay"},
                  "type": "category", "categoryorder": "array", "categoryarray": points},
        "yaxis": y_axis, "shapes": shapes, "annotations": annotations,
        "legend": {"orientation": "h", "y": -0.35}}}


def render_summary(rows: list[dict[str, Any]], grid_keys: list[str]) -> str:
    columns = list(dict.fromkeys(k for r in rows for k in r))
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_text(c, r.get(c)))}</td>" for c in columns) + "</tr>"
                   for r in rows)
    plots = "".join(chart(f"plot-{m}", _figure(m, rows, grid_keys)) for m in METRICS)
    return page(f"fumarole sweep: {len(rows)} replays",
                f"{plots}<h2>Results</h2><div class='wide'><table><tr>{head}</tr>{body}</table></div>")


def _text(column: str, value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return shown_path(str(value)) if column in ("trace", "bundle") else str(value)
