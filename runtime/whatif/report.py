"""report.html: one self-contained file (plots inlined as base64 PNG, no network) for one or two replays.

Every plot is drawn once per run, side by side on a shared y axis when a
second bundle is compared, and every table has one column per run.
matplotlib is imported here only, so ``fumarole run`` never pays for it.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import Any, Callable

from fumarole.runtime.whatif.metrics import Recording

# Plot ids, in report order (tests check that each is in the file).
PLOTS = ("share", "pending", "waits", "utilisation", "evictions")
_TITLES = {"share": "Allocated vs deserved share over time (CPU)",
           "pending": "Pending tasks over time",
           "waits": "Job wait time per queue",
           "utilisation": "Cluster utilisation per resource",
           "evictions": "Evictions over time (cumulative)"}


def _hours(t: float) -> float:
    return t / 3600.0


def _series(rows: list[dict], queue: str, key: Callable[[dict], float | None]) -> tuple[list[float], list[float]]:
    """A queue's step series with only the points where the value changes (and the last), for fast drawing."""
    points = [(row["t"], value) for row in rows if row["queue"] == queue and (value := key(row)) is not None]
    return _changes(points)


def _changes(points: list[tuple[float, float]]) -> tuple[list[float], list[float]]:
    xs, ys = [], []
    for i, (t, value) in enumerate(points):
        if not ys or value != ys[-1] or i == len(points) - 1:
            xs.append(_hours(t))
            ys.append(value)
    return xs, ys


def _queues(run: Recording) -> list[str]:
    return sorted({row["queue"] for row in run.queues})


def _draw_share(ax, run: Recording) -> None:
    for queue in _queues(run):
        xs, ys = _series(run.queues, queue, lambda r: r["allocated_cpu"])
        line, = ax.step(xs, ys, where="post", label=f"{queue} allocated")
        xs, ys = _series(run.queues, queue, lambda r: r["deserved_cpu"])
        ax.step(xs, ys, where="post", linestyle="--", color=line.get_color(), label=f"{queue} deserved")
    ax.set_ylabel("CPU cores")


def _draw_pending(ax, run: Recording) -> None:
    for queue in _queues(run):
        xs, ys = _series(run.queues, queue, lambda r: r["pending_tasks"])
        ax.step(xs, ys, where="post", label=queue)
    ax.set_ylabel("pending tasks")


def _draw_waits(ax, run: Recording) -> None:
    queues = sorted({j["queue"] for j in run.jobs})
    waits = [[(j["started"] - j["submitted"]) / 60.0 for j in run.jobs if j["queue"] == q and j["started"] is not None]
             for q in queues]
    if queues:
        ax.boxplot([w or [0.0] for w in waits], showfliers=True)
        ax.set_xticks(range(1, len(queues) + 1), queues, rotation=30)
    ax.set_ylabel("wait (minutes)")


def _draw_utilisation(ax, run: Recording) -> None:
    capacity = sorted(run.capacity, key=lambda r: r["t"])
    by_time: dict[float, dict[str, float]] = {}
    for row in run.queues:
        sums = by_time.setdefault(row["t"], {d: 0.0 for d in run.dims})
        for d in run.dims:
            sums[d] += row[f"allocated_{d}"]
    for d in run.dims:
        points = []
        for t in sorted(by_time):
            total = next((c[d] for c in reversed(capacity) if c["t"] <= t), 0.0)
            points.append((t, by_time[t][d] / total if total else 0.0))
        ax.step(*_changes(points), where="post", label=d)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("used / allocatable")


def _draw_evictions(ax, run: Recording) -> None:
    for queue in sorted({e["queue"] for e in run.evictions}):
        times = [_hours(e["t"]) for e in run.evictions if e["queue"] == queue]
        ax.step([0.0, *times], list(range(len(times) + 1)), where="post", label=queue)
    ax.set_ylabel("evictions")


_DRAW = {"share": _draw_share, "pending": _draw_pending, "waits": _draw_waits,
         "utilisation": _draw_utilisation, "evictions": _draw_evictions}


def _plot(name: str, runs: list[Recording]) -> str:
    """One figure, one panel per run, as a base64 PNG."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, axes = plt.subplots(1, len(runs), figsize=(6.4 * len(runs), 3.6), sharey=True, squeeze=False)
    for ax, run in zip(axes[0], runs):
        _DRAW[name](ax, run)
        ax.set_title(run.bundle, fontsize=10)
        if name != "waits":
            ax.set_xlabel("virtual time (hours)")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="best")
        ax.grid(alpha=0.3)
    return png_base64(fig)


def png_base64(fig) -> str:
    """A finished matplotlib figure as base64 PNG (for a data: URL), closed."""
    from matplotlib import pyplot as plt

    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


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
    return f"<h2>{html.escape(title)}</h2><table><tr><th></th>{head}</tr>{body}</table>"


def _figure_rows(summaries: list[dict], pick: Callable[[dict], dict]) -> list[tuple[str, list[Any]]]:
    parts = [pick(s) for s in summaries]
    rows = [(label, [p.get(key) for p in parts]) for label, key in
            (("jobs submitted", "jobsSubmitted"), ("jobs completed", "jobsCompleted"),
             ("jobs never started", "jobsNeverStarted"), ("evictions", "evictions"),
             ("lost task-seconds", "lostTaskSeconds"))]
    for what, key in (("wait", "waitSeconds"), ("completion", "completionSeconds")):
        for stat in ("p50", "p95", "max"):
            rows.append((f"{what} {stat} (s)", [(p.get(key) or {}).get(stat) for p in parts]))
    return rows


def _overall_rows(summaries: list[dict]) -> list[tuple[str, list[Any]]]:
    rows = [("virtual seconds", [s["virtualSeconds"] for s in summaries]),
            ("sessions", [s["sessions"] for s in summaries]),
            ("virtual seconds per wall second", [s["speed"] for s in summaries]),
            ("fairness (Jain, time-weighted)", [s["overall"]["fairness"] for s in summaries])]
    rows += _figure_rows(summaries, lambda s: s["overall"])
    dims = sorted({d for s in summaries for d in s["overall"]["utilisation"]})
    rows += [(f"utilisation {d}", [s["overall"]["utilisation"].get(d) for s in summaries]) for d in dims]
    rows += [("ping-pong queue pairs", [len(s["pingPong"]["queues"]) for s in summaries]),
             ("ping-pong job pairs", [len(s["pingPong"]["jobs"]) for s in summaries])]
    return rows


def _ping_pong(summaries: list[dict], runs: list[Recording]) -> str:
    parts = ["<h2>Ping-pong</h2>"]
    for summary, run in zip(summaries, runs):
        found = summary["pingPong"]["queues"] + summary["pingPong"]["jobs"]
        parts.append(f"<h3>{html.escape(run.bundle)}</h3>")
        if not found:
            parts.append("<p>none</p>")
            continue
        items = []
        for pair in found:
            episodes = ", ".join(f"sessions {e['from']['session']}&rarr;{e['to']['session']} "
                                 f"(t={e['from']['t']:g}s&rarr;{e['to']['t']:g}s)" for e in pair["episodes"][:10])
            more = f" and {len(pair['episodes']) - 10} more" if len(pair["episodes"]) > 10 else ""
            items.append(f"<li>{' &harr; '.join(html.escape(x) for x in pair['between'])}: "
                         f"{pair['reversals']} reversals: {episodes}{more}</li>")
        parts.append("<ul>" + "".join(items) + "</ul>")
    return "".join(parts)


_STYLE = ("body{font-family:sans-serif;max-width:1400px;margin:2em auto;padding:0 1em;color:#222}"
          "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .6em;"
          "text-align:right}td:first-child{text-align:left}img{max-width:100%}")


def render_report(runs: list[Recording], summaries: list[dict]) -> str:
    title = f"fumarole replay: {runs[0].trace}"
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>",
             "<p>" + " vs ".join(html.escape(run.bundle) for run in runs) + "</p>",
             _table("Overall", _overall_rows(summaries), runs)]
    for name in PLOTS:
        parts.append(f"<h2>{_TITLES[name]}</h2><img id='plot-{name}' alt='{_TITLES[name]}' "
                     f"src='data:image/png;base64,{_plot(name, runs)}'>")
    queues = sorted({q for s in summaries for q in s["queues"]})
    for queue in queues:
        rows = _figure_rows(summaries, lambda s, q=queue: s["queues"].get(q, {}))
        rows.append(("mean share of deserved", [s["queues"].get(queue, {}).get("meanShare") for s in summaries]))
        parts.append(_table(f"Queue {queue}", rows, runs))
    parts.append(_ping_pong(summaries, runs))
    parts.append("</body></html>\n")
    return "".join(parts)


def write_report(path: Path, runs: list[Recording], summaries: list[dict]) -> None:
    path.write_text(render_report(runs, summaries))

