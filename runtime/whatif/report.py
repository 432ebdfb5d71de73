"""report.html: one self-contained, interactive page for one or two replays (``--compare``).

Every time chart shares one x axis from zero to the end of the longest replay, in one unit chosen
for the replay's length (seconds, minutes or hours; durations in the tables use it too), and the
panels of compared runs zoom together.  Deserved shares are drawn over the allocated ones, counts
get whole-number ticks, an empty panel says so, each eviction is a point whose hover names the
task, its job and queue, the reason and the queues it was for, and goes, clicked, to the eviction's
explanation (the rules that chose it, as ``run --explain`` words them), and each ping-pong episode
links to a zoom on its window.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any, Callable

from fumarole.runtime.whatif.charts import TimeUnit, chart, color, count_axis, page, side_by_side, time_unit
from fumarole.runtime.whatif.clock import EXPLAINED_SESSIONS
from fumarole.runtime.whatif.metrics import Recording

# Chart ids, in report order (tests check that each is drawn).
PLOTS = ("share", "pending", "waits", "utilisation", "evictions")
_TITLES = {"share": "Allocated vs deserved share over time (CPU)",
           "pending": "Pending tasks over time",
           "waits": "Job wait time per queue",
           "utilisation": "Cluster utilisation per resource",
           "evictions": "Evictions over time (cumulative)"}


def _queues(run: Recording) -> list[str]:
    return sorted({row["queue"] for row in run.queues})


def _steps(points: list[tuple[float, float]], end: float, unit: TimeUnit) -> tuple[list[float], list[float]]:
    """A step series with the points where the value changes, carried on to ``end``."""
    xs: list[float] = []
    ys: list[float] = []
    for t, value in points:
        if not ys or value != ys[-1]:
            xs.append(unit.of(t))
            ys.append(value)
    if ys and (not xs or xs[-1] < unit.of(end)):
        xs.append(unit.of(end))
        ys.append(ys[-1])
    return xs, ys


def _line(xs: list[float], ys: list[float], name: str, colour: str, **style: Any) -> dict[str, Any]:
    return {"type": "scatter", "mode": "lines", "x": xs, "y": ys, "name": name,
            "line": {"shape": "hv", "color": colour, **style.pop("line", {})}, **style}


class _Report:
    """The charts and tables of one report: the runs, their common end, queues and unit."""

    def __init__(self, runs: list[Recording], summaries: list[dict]) -> None:
        self.runs, self.summaries = runs, summaries
        self.end = max(run.end for run in runs) or 1.0
        self.unit = time_unit(self.end)
        self.queues = sorted({q for run in runs for q in _queues(run)})
        self.colours = {q: color(i) for i, q in enumerate(self.queues)}
        self.x_title = self.unit.label("virtual time")

    def series(self, run: Recording, queue: str, key: Callable[[dict], float | None]) -> tuple[list, list]:
        points = [(row["t"], value) for row in run.queues if row["queue"] == queue and (value := key(row)) is not None]
        return _steps(points, self.end, self.unit)

    def timeline(self, name: str, panels: list[dict], y_axis: dict[str, Any]) -> str:
        figure = side_by_side(panels, [run.bundle for run in self.runs], self.x_title, y_axis,
                              x_range=(0.0, self.unit.of(self.end)))
        return chart(f"plot-{name}", figure, timeline=True)

    def share(self) -> str:
        panels = []
        for run in self.runs:
            allocated, deserved = [], []
            for queue in _queues(run):
                colour = self.colours[queue]
                allocated.append(_line(*self.series(run, queue, lambda r: r["allocated_cpu"]), f"{queue} allocated",
                                       colour, line={"width": 2}))
                # drawn after (over) the allocated lines, dashed and wider, so an equal line never hides it
                deserved.append(_line(*self.series(run, queue, lambda r: r["deserved_cpu"]), f"{queue} deserved",
                                      colour, line={"width": 3, "dash": "dash"}, opacity=0.75))
            panels.append({"traces": allocated + deserved, "empty": "no queues"})
        return self.timeline("share", panels, {"title": {"text": "CPU cores"}, "rangemode": "tozero"})

    def pending(self) -> str:
        panels, largest = [], 0.0
        for run in self.runs:
            traces = [_line(*self.series(run, q, lambda r: r["pending_tasks"]), q, self.colours[q])
                      for q in _queues(run)]
            largest = max([largest, *[max(t["y"] or [0]) for t in traces]])
            panels.append({"traces": traces, "empty": "no queues"})
        return self.timeline("pending", panels, count_axis("pending tasks", largest))

    def waits(self) -> str:
        panels = []
        for run in self.runs:
            traces = []
            for queue in sorted({j["queue"] for j in run.jobs}):
                waits = [j for j in run.jobs if j["queue"] == queue and j["started"] is not None]
                if waits:
                    # every job is a point beside its box, so a queue of one job is still visible
                    traces.append({"type": "box", "name": queue, "marker": {"color": self.colours.get(queue, "#444")},
                                   "y": [self.unit.of(j["started"] - j["submitted"]) for j in waits],
                                   "text": [j["job"] for j in waits], "boxpoints": "all", "jitter": 0.4,
                                   "pointpos": -1.6, "hovertemplate": "%{text}: waited %{y:.3g} "
                                                                       + self.unit.name + "<extra></extra>"})
            panels.append({"traces": traces, "empty": "no job started"})
        figure = side_by_side(panels, [run.bundle for run in self.runs], "queue",
                              {"title": {"text": self.unit.label("wait")}, "rangemode": "tozero"})
        return chart("plot-waits", figure)

    def utilisation(self) -> str:
        panels = []
        for run in self.runs:
            capacity = sorted(run.capacity, key=lambda r: r["t"])
            by_time: dict[float, dict[str, float]] = {}
            for row in run.queues:
                sums = by_time.setdefault(row["t"], {d: 0.0 for d in run.dims})
                for d in run.dims:
                    sums[d] += row[f"allocated_{d}"]
            traces = []
            for i, d in enumerate(run.dims):
                points = []
                for t in sorted(by_time):
                    total = next((c[d] for c in reversed(capacity) if c["t"] <= t), 0.0)
                    points.append((t, by_time[t][d] / total if total else 0.0))
                traces.append(_line(*_steps(points, self.end, self.unit), d, color(i)))
            panels.append({"traces": traces, "empty": "no samples"})
        return self.timeline("utilisation", panels, {"title": {"text": "used / allocatable"},
                                                     "range": [0, 1.05], "tickformat": ".0%"})

    def evictions(self) -> str:
        panels, largest = [], 0
        for run_index, run in enumerate(self.runs):
            traces = []
            for queue in sorted({e["queue"] for e in run.evictions}):
                taken = [e for e in run.evictions if e["queue"] == queue]
                largest = max(largest, len(taken))
                xs = [0.0] + [self.unit.of(e["t"]) for e in taken] + [self.unit.of(self.end)]
                ys: list[float] = [0, *range(1, len(taken) + 1), len(taken)]
                traces.append(_line(xs, ys, queue, self.colours.get(queue, "#444"), hoverinfo="skip"))
                traces.append({"type": "scatter", "mode": "markers", "x": xs[1:-1], "y": ys[1:-1], "name": queue,
                               "showlegend": False, "marker": {"color": self.colours.get(queue, "#444"), "size": 8},
                               "text": [_eviction_text(e, self.unit) for e in taken],
                               "customdata": [f"#{eviction_anchor(run_index, e)}" for e in taken],
                               "hovertemplate": "%{text}<extra></extra>"})
            panels.append({"traces": traces, "empty": "no evictions"})
        return self.timeline("evictions", panels, count_axis("evictions", largest))


def _eviction_text(eviction: dict, unit: TimeUnit) -> str:
    wanted = ", ".join(eviction["for_queues"]) or "its own queue"
    return (f"{html.escape(eviction['task'])} (job {html.escape(eviction['job'])}, queue "
            f"{html.escape(eviction['queue'])})<br>session {eviction['session']} at "
            f"{unit.of(eviction['t']):.4g} {unit.name}: {html.escape(str(eviction['reason']))}<br>"
            f"for {html.escape(wanted)}; lost {unit.of(eviction['lost']):.3g} {unit.name} of work"
            + ("<br>click: why" if eviction.get("why") else ""))


def eviction_anchor(run_index: int, eviction: dict) -> str:
    """The id of an eviction's entry in the report's list of explanations."""
    return f"evict-{run_index}-{eviction['session']}-{eviction['task']}"


def _why(runs: list[Recording], unit: TimeUnit) -> str:
    """Each eviction with the explanation of the session that chose it: the rules, at their places."""
    parts = ["<h2 id='why'>Why each eviction</h2><p class='note'>As <code>fumarole run --explain</code> "
             f"words it; the first {EXPLAINED_SESSIONS} sessions that evict are explained (each runs again, "
             "explained). Click an eviction in the chart to come here.</p>"]
    for run_index, run in enumerate(runs):
        parts.append(f"<h3>{html.escape(run.bundle)}</h3>")
        if not run.evictions:
            parts.append("<p class='note'>none</p>")
            continue
        items = []
        for e in run.evictions:
            lines = e.get("why") or ["not explained (after the first sessions that evict)"]
            items.append(f"<li id='{html.escape(eviction_anchor(run_index, e))}'>"
                         f"<b>{html.escape(e['task'])}</b> at {unit.of(e['t']):.4g} {unit.name} "
                         f"(session {e['session']}, {html.escape(str(e['reason']))})"
                         f"<pre>{html.escape(chr(10).join(lines))}</pre></li>")
        parts.append("<ul class='why'>" + "".join(items) + "</ul>")
    return "".join(parts)


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return html.escape(str(value))


def _table(title: str, rows: list[tuple[str, list[Any]]], runs: list[Recording]) -> str:
    head = "".join(f"<th>{html.escape(run.bundle)}</th>" for run in runs)
    body = "".join(f"<tr><td>{html.escape(label)}</td>{''.join(f'<td>{_cell(v)}</td>' for v in values)}</tr>"
                   for label, values in rows)
    return f"<h2>{html.escape(title)}</h2><div class='wide'><table><tr><th></th>{head}</tr>{body}</table></div>"


def _in(unit: TimeUnit, seconds: Any) -> Any:
    return None if seconds is None else unit.of(seconds)


def _figure_rows(summaries: list[dict], pick: Callable[[dict], dict], unit: TimeUnit) -> list[tuple[str, list[Any]]]:
    parts = [pick(s) for s in summaries]
    rows = [(label, [p.get(key) for p in parts]) for label, key in
            (("jobs submitted", "jobsSubmitted"), ("jobs completed", "jobsCompleted"),
             ("jobs never started", "jobsNeverStarted"), ("evictions", "evictions"))]
    rows.append((f"lost task time ({unit.name})", [_in(unit, p.get("lostTaskSeconds")) for p in parts]))
    for what, key in (("wait", "waitSeconds"), ("completion", "completionSeconds")):
        for stat in ("p50", "p95", "max"):
            rows.append((f"{what} {stat} ({unit.name})", [_in(unit, (p.get(key) or {}).get(stat)) for p in parts]))
    return rows


def _overall_rows(summaries: list[dict], unit: TimeUnit) -> list[tuple[str, list[Any]]]:
    rows = [(f"virtual time ({unit.name})", [unit.of(s["virtualSeconds"]) for s in summaries]),
            ("sessions", [s["sessions"] for s in summaries]),
            ("sessions skipped (nothing could change)", [s["sessionsSkipped"] for s in summaries]),
            ("clock stopped", [s["stoppedBy"] for s in summaries]),
            ("virtual seconds per wall second", [s["speed"] for s in summaries]),
            ("fairness (Jain, time-weighted)", [s["overall"]["fairness"] for s in summaries])]
    rows += _figure_rows(summaries, lambda s: s["overall"], unit)
    dims = sorted({d for s in summaries for d in s["overall"]["utilisation"]})
    rows += [(f"utilisation {d}", [s["overall"]["utilisation"].get(d) for s in summaries]) for d in dims]
    rows += [("ping-pong queue pairs", [len(s["pingPong"]["queues"]) for s in summaries]),
             ("ping-pong job pairs", [len(s["pingPong"]["jobs"]) for s in summaries])]
    return rows


def _ping_pong(summaries: list[dict], runs: list[Recording], unit: TimeUnit) -> str:
    """Each episode with a link that zooms every time chart to it (a minute either side, at least)."""
    parts = ["<h2>Ping-pong</h2>"]
    margin = max(60.0, unit.seconds)
    for summary, run in zip(summaries, runs):
        found = summary["pingPong"]["queues"] + summary["pingPong"]["jobs"]
        parts.append(f"<h3>{html.escape(run.bundle)}</h3>")
        if not found:
            parts.append("<p class='note'>none</p>")
            continue
        items = []
        for pair in found:
            episodes = ", ".join(
                f"<a href='#timelines' onclick='return fumaroleZoom({unit.of(e['from']['t'] - margin):.6g}, "
                f"{unit.of(e['to']['t'] + margin):.6g})'>sessions {e['from']['session']}&rarr;{e['to']['session']} "
                f"({unit.of(e['from']['t']):.4g}&rarr;{unit.of(e['to']['t']):.4g} {unit.name})</a>"
                for e in pair["episodes"][:10])
            more = f" and {len(pair['episodes']) - 10} more" if len(pair["episodes"]) > 10 else ""
            items.append(f"<li>{' &harr; '.join(html.escape(x) for x in pair['between'])}: "
                         f"{pair['reversals']} reversals: {episodes}{more}</li>")
        parts.append("<ul>" + "".join(items) + "</ul>")
    return "".join(parts)


def render_report(runs: list[Recording], summaries: list[dict]) -> str:
    report = _Report(runs, summaries)
    unit = report.unit
    parts = ["<p>" + " vs ".join(html.escape(run.bundle) for run in runs) + "</p>",
             _table("Overall", _overall_rows(summaries, unit), runs),
             "<h2 id='timelines'>Over time</h2><p class='note'>Drag to zoom (compared runs zoom together), "
             "double-click to reset, hover for values; <a href='#timelines' onclick='return fumaroleReset()'>"
             "show the whole replay</a>.</p>"]
    for name in PLOTS:
        parts.append(f"<h3>{_TITLES[name]}</h3>{getattr(report, name)()}")
    for queue in report.queues:
        rows = _figure_rows(summaries, lambda s: s["queues"].get(queue, {}), unit)  # called at once: no late binding
        rows.append(("mean share of deserved", [s["queues"].get(queue, {}).get("meanShare") for s in summaries]))
        parts.append(_table(f"Queue {queue}", rows, runs))
    parts.append(_ping_pong(summaries, runs, unit))
    parts.append(_why(runs, unit))
    return page(f"fumarole replay: {runs[0].trace}", "".join(parts))


def write_report(path: Path, runs: list[Recording], summaries: list[dict]) -> None:
    path.write_text(render_report(runs, summaries))
