"""fumarole sweep: grids of plugin arguments over traces and bundles, on a real Dask LocalCluster."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from fumarole.runtime.whatif.sweep_report import METRICS
from tests.report_helpers import assert_self_contained, drawn_charts

ROOT = Path(__file__).resolve().parent.parent


def _sweep_file(tmp_path: Path, grid: str, bundles: tuple[str, ...] = ("examples/site-min-runtime",)) -> Path:
    spec = tmp_path / "sweep.yaml"
    spec.write_text(f"""kind: Sweep
traces: [{ROOT / 'examples/traces/two-queues.yaml'}]
bundles: [{', '.join(str(ROOT / b) for b in bundles)}]
grid: {grid}
options: {{period: 60s}}
""")
    return spec


def test_a_sweep_on_a_dask_local_cluster_runs_each_combination_once(cli, tmp_path):
    out = tmp_path / "out"
    result = cli("sweep", str(_sweep_file(tmp_path, "{minRuntime: [5m, 3h]}")), "--dask", "local",
                 "--workers", "2", "--out", str(out))
    assert result.code == 0, result.err
    with (out / "results.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(Path(r["bundle"]).name, r["minRuntime"], r["evictions"]) for r in rows] == [
        ("site-min-runtime", "5m", "2"), ("site-min-runtime", "3h", "0")]
    summary = (out / "summary.html").read_text()
    assert sorted(drawn_charts(summary)) == sorted(f"plot-{metric}" for metric in METRICS)
    assert_self_contained(summary)


def test_a_bad_sweep_file_is_reported_with_its_place(cli, tmp_path):
    result = cli("sweep", str(_sweep_file(tmp_path, "{minRuntime: 1h}")), "--out", str(tmp_path / "out"))
    assert result.code == 2
    assert re.match(r".*sweep\.yaml:4:7: error\[T004\]: grid maps a plugin argument's key", result.err), result.err


def test_a_grid_value_of_the_wrong_type_names_the_argument(cli, tmp_path):
    result = cli("sweep", str(_sweep_file(tmp_path, "{minRuntime: [often]}")), "--workers", "1",
                 "--out", str(tmp_path / "out"))
    assert result.code == 2
    assert "error[C012]: argument 'minRuntime' of plugin 'min_runtime' must be a duration, not 'often'" in result.err


def test_a_bundle_without_the_grid_key_runs_once_per_trace(tmp_path):
    from fumarole.runtime.whatif.sweep import distinct, load_sweep

    spec = _sweep_file(tmp_path, "{minRuntime: [5m, 3h]}",
                       ("examples/two-queues/volcano-scheduler.conf", "examples/site-min-runtime"))
    runs = distinct(load_sweep(spec))
    assert [(Path(r.bundle).name, r.arguments) for r in runs] == [
        ("volcano-scheduler.conf", (("minRuntime", "5m"),)), ("site-min-runtime", (("minRuntime", "5m"),)),
        ("site-min-runtime", (("minRuntime", "3h"),))]


def test_a_grid_turning_on_switches_volcano_refuses_together_is_c022(cli, tmp_path):
    """The grid's value is checked like a configuration's: deviceshare's vGPU beside GPU sharing."""
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text("actions: enqueue, allocate\ntiers:\n- plugins:\n  - name: predicates\n  - name: deviceshare\n"
                    "    arguments: {deviceshare.GPUSharingEnable: true}\n")
    spec = _sweep_file(tmp_path, "{deviceshare.VGPUEnable: [false, true]}", (str(conf),))
    result = cli("sweep", str(spec), "--workers", "1", "--out", str(tmp_path / "out"))
    assert result.code == 2 and "Traceback" not in result.err
    assert "error[C022]: deviceshare cannot turn on deviceshare.VGPUEnable together with " \
           "deviceshare.GPUSharingEnable" in result.err, result.err
