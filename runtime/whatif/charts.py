"""Interactive charts for the replay and sweep reports: one self-contained HTML file each.

A chart is a Plotly figure written as plain data (traces and layout as JSON), drawn in the browser
by plotly.js, which is inlined once per page: the file opens offline, zooms and pans, and shows the
values under the pointer.  Python's plotly package is used only for that script (the ``report``
extra); nothing here imports it until a page is written.  The page records in its ``<body>`` how
many charts were drawn and any script error, so a headless browser can check that it renders.
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass
from typing import Any

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")


@dataclass(frozen=True)
class TimeUnit:
    """The one unit every time axis and duration of a report is shown in."""

    name: str  # "s", "min", "h"
    seconds: float

    def of(self, seconds: float) -> float:
        return seconds / self.seconds

    def label(self, what: str) -> str:
        return f"{what} ({self.name})"


def time_unit(span_seconds: float) -> TimeUnit:
    """Seconds up to 10 minutes, minutes up to 10 hours, hours beyond: ticks stay readable numbers."""
    if span_seconds <= 600:
        return TimeUnit("s", 1.0)
    if span_seconds <= 36000:
        return TimeUnit("min", 60.0)
    return TimeUnit("h", 3600.0)


def count_axis(title: str, largest: float) -> dict[str, Any]:
    """A y axis of counts: whole-number ticks, from zero."""
    step = max(1, math.ceil(max(largest, 1) / 8))
    return {"title": {"text": title}, "rangemode": "tozero", "dtick": step, "tickformat": ",d"}


def color(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def side_by_side(panels: list[dict[str, Any]], titles: list[str], x_title: str, y_axis: dict[str, Any],
                 x_range: tuple[float, float] | None = None, height: int = 360) -> dict[str, Any]:
    """One figure with a panel per run: the panels share both axes (zooming one zooms the others).

    Each panel is ``{"traces": [...], "empty": "note"}``; a panel without traces shows its note."""
    width = 1.0 / len(panels)
    data, annotations = [], []
    layout: dict[str, Any] = {"height": height, "margin": {"t": 40, "b": 60, "l": 70, "r": 20},
                              "legend": {"orientation": "h", "y": -0.25}, "hovermode": "closest"}
    for i, (panel, title) in enumerate(zip(panels, titles)):
        suffix = "" if i == 0 else str(i + 1)
        x_axis = {"domain": [i * width + (0.04 if i else 0), (i + 1) * width - (0.04 if i + 1 < len(panels) else 0)],
                  "title": {"text": x_title}, "anchor": f"y{suffix}", "zeroline": False}
        if x_range is not None:
            x_axis["range"] = list(x_range)
        if i:
            x_axis["matches"] = "x"
        layout[f"xaxis{suffix}"] = x_axis
        layout[f"yaxis{suffix}"] = {**y_axis, "anchor": f"x{suffix}", **({"matches": "y"} if i else {})}
        for trace in panel["traces"]:
            data.append({**trace, "xaxis": f"x{suffix}", "yaxis": f"y{suffix}",
                         "showlegend": i == 0 and trace.get("showlegend", True)})
        annotations.append({"text": f"<b>{html.escape(title)}</b>", "showarrow": False, "xref": f"x{suffix} domain",
                            "yref": f"y{suffix} domain", "x": 0.5, "y": 1.1, "xanchor": "center"})
        if not panel["traces"]:
            annotations.append({"text": panel.get("empty", "none"), "showarrow": False, "font": {"size": 16},
                                "xref": f"x{suffix} domain", "yref": f"y{suffix} domain", "x": 0.5, "y": 0.5})
    layout["annotations"] = annotations
    return {"data": data, "layout": layout}


def chart(element_id: str, figure: dict[str, Any], timeline: bool = False) -> str:
    """A chart's placeholder and the call that draws it; a ``timeline`` (virtual time on x) follows
    the page's zoom links."""
    spec = json.dumps(figure, separators=(",", ":")).replace("</", "<\\/")
    return (f"<div class='chart{' timeline' if timeline else ''}' id='{element_id}'></div>"
            f"<script>fumaroleDraw({json.dumps(element_id)}, {spec});</script>")


def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs  # the report extra

    return get_plotlyjs()


# Drawn before any chart: counts charts drawn and script errors into <body data-*>, and lets a link
# zoom every time chart of the page to one window (an incident).
_PAGE_SCRIPT = """
document.body.dataset.charts = "0";
window.addEventListener("error", function (e) {
  document.body.dataset.errors = (document.body.dataset.errors || "") + e.message + ";";
});
function fumaroleDraw(id, figure) {
  Plotly.newPlot(id, figure.data, figure.layout, {responsive: true, displaylogo: false})
    .then(function (el) {
      document.body.dataset.charts = String(Number(document.body.dataset.charts) + 1);
      // A point that names a place on the page (customdata "#id") goes there when clicked.
      el.on("plotly_click", function (event) {
        var target = event.points.length ? event.points[0].customdata : null;
        if (typeof target === "string" && target.charAt(0) === "#") { location.hash = target; }
      });
    })
    .catch(function (e) { document.body.dataset.errors = (document.body.dataset.errors || "") + e + ";"; });
}
function fumaroleZoom(x0, x1) {
  document.querySelectorAll(".chart.timeline").forEach(function (el) {
    Plotly.relayout(el, {"xaxis.range": [x0, x1]});
  });
  document.getElementById("timelines").scrollIntoView();
  return false;
}
function fumaroleReset() {
  document.querySelectorAll(".chart.timeline").forEach(function (el) {
    Plotly.relayout(el, {"xaxis.autorange": true});
  });
  return false;
}
"""

STYLE = ("body{font-family:sans-serif;max-width:1400px;margin:2em auto;padding:0 1em;color:#222}"
         "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .6em;"
         "text-align:right}td:first-child,th:first-child{text-align:left}.wide{overflow-x:auto;max-width:100%}"
         ".chart{width:100%}.note{color:#555}")


def page(title: str, body: str) -> str:
    """A whole self-contained page: the styles, plotly.js inlined, the page script, then ``body``."""
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style><script>{_plotly_js()}</script></head><body>"
            f"<script>{_PAGE_SCRIPT}</script><h1>{html.escape(title)}</h1>{body}</body></html>\n")
