"""The replay report and the sweep summary as a reader meets them: one interactive offline page,
time axes aligned in one unit, deserved shares visible, counts as whole numbers, empty panels said,
evictions with their reasons, ping-pong incidents one click away; drawn by a real browser."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fumarole.runtime.bundles.bundle import bundle_from_volcano_conf, load_bundle
from fumarole.runtime.whatif.charts import time_unit
from fumarole.runtime.whatif.clock import ReplayOptions, replay
from fumarole.runtime.whatif.metrics import summarise
from fumarole.runtime.whatif.report import PLOTS, render_report
from fumarole.runtime.whatif.sweep_report import METRICS, render_summary, shown_path
from fumarole.runtime.whatif.trace import load_trace
from tests.report_helpers import assert_self_contained, drawn_charts, without_plotly

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT / "examples" / "traces"
RECLAIM = ROOT / "examples" / "two-queues" / "volcano-scheduler.conf"


@pytest.fixture(scope="module")
def compared():
    """Volcano's reclaim (two evictions) beside site-min-runtime (none) on the two-queue trace."""
    trace = load_trace(TRACES / "two-queues.yaml")
    options = ReplayOptions(period=60.0)
    runs = [replay(trace, bundle_from_volcano_conf(RECLAIM), options),
            replay(trace, load_bundle(ROOT / "examples" / "site-min-runtime"), options)]
    runs = [run.__class__(**{**run.__dict__, "bundle": name}) for run, name in zip(runs, ("volcano", "site"))]
    page = render_report(runs, [summarise(run) for run in runs])
    return runs, page, drawn_charts(page)


def test_the_time_charts_share_one_axis_from_zero_to_the_end_in_one_unit(compared):
    runs, page, charts = compared
    end = max(run.end for run in runs)
    unit = time_unit(end)
    assert unit.name == "min"  # 101 minutes of replay
    for name in ("share", "pending", "utilisation", "evictions"):
        layout = charts[f"plot-{name}"]["layout"]
        assert layout["xaxis"]["range"] == [0.0, end / 60.0], name
        assert layout["xaxis"]["title"]["text"] == layout["xaxis2"]["title"]["text"] == "virtual time (min)"
        assert layout["xaxis2"]["matches"] == "x" and layout["yaxis2"]["matches"] == "y"  # zoom together
    written = without_plotly(page)
    assert "wait p95 (min)" in written and "wait p95 (s)" not in written and "(h)" not in written


def test_deserved_lines_are_drawn_over_the_allocated_ones(compared):
    traces = compared[2]["plot-share"]["data"]
    panel = [t for t in traces if t["xaxis"] == "x"]
    kinds = [t["name"].rsplit(" ", 1)[1] for t in panel]
    assert kinds == sorted(kinds)  # every "allocated" before every "deserved"
    deserved = [t for t in panel if t["name"].endswith("deserved")]
    assert deserved and all(t["line"]["dash"] == "dash" and t["line"]["width"] == 3 for t in deserved)


def test_counts_have_whole_number_ticks_and_empty_panels_say_so(compared):
    charts = compared[2]
    for name in ("pending", "evictions"):
        axis = charts[f"plot-{name}"]["layout"]["yaxis"]
        assert axis["tickformat"] == ",d" and isinstance(axis["dtick"], int) and axis["dtick"] >= 1
    notes = [a["text"] for a in charts["plot-evictions"]["layout"]["annotations"] if a.get("yref") == "y2 domain"]
    assert "no evictions" in notes  # site-min-runtime evicts nothing
    assert [t for t in charts["plot-evictions"]["data"] if t["xaxis"] == "x2"] == []


def test_evictions_run_to_the_end_and_name_task_reason_and_beneficiary(compared):
    runs, _, charts = compared
    end = max(run.end for run in runs) / 60.0
    lines = [t for t in charts["plot-evictions"]["data"] if t["mode"] == "lines"]
    points = [t for t in charts["plot-evictions"]["data"] if t["mode"] == "markers"]
    assert lines and all(t["x"][-1] == end for t in lines)
    assert sum(len(t["x"]) for t in points) == len(runs[0].evictions) == 2
    first = points[0]["text"][0]
    evicted = runs[0].evictions[0]
    assert evicted["task"] in first and evicted["reason"] in first and f"for {evicted['for_queues'][0]}" in first


def test_each_eviction_links_to_the_rules_that_chose_it(compared):
    runs, page, charts = compared
    points = [t for t in charts["plot-evictions"]["data"] if t["mode"] == "markers"]
    targets = [target for t in points for target in t["customdata"]]
    assert len(targets) == 2 and all(target.startswith("#evict-") for target in targets)
    for target, eviction in zip(targets, runs[0].evictions):
        entry = re.search(rf"<li id='{re.escape(target[1:])}'>(.*?)</li>", page, re.DOTALL)
        assert entry is not None, target  # the chart's link lands on the eviction's explanation
        why = entry.group(1)
        assert f"{eviction['task']} evicted from node-1 by reclaim" in why
        assert "policies/volcano/actions/reclaim.policy:" in why and "victims chosen by reclaimable(" in why
    assert "click: why" in points[0]["text"][0]


def test_a_queue_of_one_job_is_visible_in_the_waits(compared):
    boxes = compared[2]["plot-waits"]["data"]
    assert boxes and all(b["type"] == "box" and b["boxpoints"] == "all" for b in boxes)


def test_each_ping_pong_episode_links_to_a_zoom_on_its_window():
    trace = load_trace(TRACES / "ping-pong.yaml")
    run = replay(trace, bundle_from_volcano_conf(RECLAIM), ReplayOptions(period=60.0))
    summary = summarise(run)
    episodes = [e for pair in summary["pingPong"]["queues"] for e in pair["episodes"]]
    assert episodes
    page = render_report([run], [summary])
    unit = time_unit(run.end)
    zooms = [(float(a), float(b)) for a, b in re.findall(r"fumaroleZoom\(([-\d.e+]+), ([-\d.e+]+)\)", page)]
    first = episodes[0]
    assert zooms[0][0] < unit.of(first["from"]["t"]) and zooms[0][1] > unit.of(first["to"]["t"])
    assert zooms[0][1] - zooms[0][0] < unit.of(run.end) / 2  # a close-up, not the whole replay


def test_the_sweep_summary_labels_its_axes_and_keeps_the_baseline_apart(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    rows = [{"trace": str(TRACES / "two-queues.yaml"), "bundle": str(ROOT / "examples/site-min-runtime/../site-min-runtime"),
             "minRuntime": m, "evictions": e, "waitP95": w} for m, e, w in (("5m", 2, 60.0), ("3h", 0, 2850.0))]
    rows.append({"trace": str(TRACES / "two-queues.yaml"), "bundle": str(RECLAIM), "minRuntime": None,
                 "evictions": 2, "waitP95": 57.0})
    page = render_summary(rows, ["minRuntime"])
    charts = drawn_charts(page)
    evictions = charts["plot-evictions"]["layout"]
    assert evictions["title"]["text"] == "Evictions" and evictions["yaxis"]["title"]["text"] == "evictions"
    assert evictions["xaxis"]["title"]["text"] == "swept arguments (minRuntime)"
    assert evictions["xaxis"]["categoryarray"] == ["minRuntime=5m", "minRuntime=3h"]  # no "(no grid key)"
    assert [s["y0"] for s in evictions["shapes"]] == [2] and "baseline" in evictions["annotations"][0]["text"]
    assert "examples/site-min-runtime</td>" in page and "/../" not in page
    assert shown_path(str(ROOT / "examples" / ".." / "examples" / "cluster.yaml")) == "examples/cluster.yaml"
    assert "<div class='wide'><table>" in page


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def _rendered(page: Path) -> str:
    """The page's DOM after a headless Chromium drew it, with every network request sent nowhere."""
    done = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                           "--proxy-server=127.0.0.1:9", "--virtual-time-budget=20000", "--dump-dom",
                           page.as_uri()], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.skipif(_chromium() is None, reason="needs Chromium (.ci/run installs it)")
def test_both_pages_render_in_a_real_browser_without_errors(compared, tmp_path):
    runs, page, charts = compared
    replay_page = tmp_path / "report.html"
    replay_page.write_text(page)
    sweep_page = tmp_path / "summary.html"
    sweep_page.write_text(render_summary([{"trace": "t.yaml", "bundle": "b", "minRuntime": "5m", "evictions": 1}],
                                         ["minRuntime"]))
    for path, count in ((replay_page, len(PLOTS)), (sweep_page, len(METRICS))):
        dom = _rendered(path)
        body = re.search(r"<body([^>]*)>", dom).group(1)
        assert "data-errors" not in body, body
        assert f'data-charts="{count}"' in body, body
        assert dom.count('class="main-svg"') >= count  # plotly drew an SVG per chart
    assert_self_contained(page)
