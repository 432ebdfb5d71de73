"""fumarole trace synth / cut: deterministic shapes, valid traces, dumps turned into traces."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from fumarole.runtime.bundles.bundle import bundle_from_volcano_conf
from fumarole.runtime.whatif.clock import replay
from fumarole.runtime.whatif.synth import SHAPES, synth_trace
from fumarole.runtime.whatif.trace import load_trace

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("shape", SHAPES)
def test_each_shape_is_a_valid_trace_and_the_seed_decides_it(cli, tmp_path, shape):
    out = tmp_path / f"{shape}.yaml"
    assert cli("trace", "synth", shape, "--seed", "3", "--nodes", "2", "--duration", "1h", "--out", str(out)).code == 0
    trace = load_trace(out)
    assert trace.events and len(trace.cluster.nodes) == 2
    assert synth_trace(shape, 3, 2, 3600.0) == yaml.safe_load(out.read_text())
    assert synth_trace(shape, 4, 2, 3600.0)["events"] != synth_trace(shape, 3, 2, 3600.0)["events"] \
        or shape == "two-queues" and len(trace.events) < 4


def test_the_cli_shapes_are_the_synth_shapes():
    from fumarole.runtime.cli.whatif_commands import SHAPES as CLI_SHAPES

    assert CLI_SHAPES == SHAPES


def test_a_trace_cut_from_a_dump_runs_its_pods_for_drawn_run_times(cli, tmp_path):
    out = tmp_path / "cut.yaml"
    result = cli("trace", "cut", str(ROOT / "examples/two-queues/cluster.yaml"), "--run-time", "fixed:30m",
                 "--out", str(out))
    assert result.code == 0, result.err
    trace = load_trace(out)
    assert trace.run_times == {f"research/sweep-{i}": 1800.0 for i in range(4)} | {
        "prod/serving-0": 1800.0, "prod/serving-1": 1800.0}
    run = replay(trace, bundle_from_volcano_conf(ROOT / "examples/two-queues/volcano-scheduler.conf"))
    assert [e["task"] for e in run.evictions] == ["research/sweep-2", "research/sweep-1"]
    # The two left running end at 30 minutes; the two evicted start again then, on their room.
    assert {j["job"]: j["finished"] for j in run.jobs} == {"prod/serving": 1801.0, "research/sweep": 3600.0}


def test_a_bad_distribution_is_a_usage_error(cli, tmp_path):
    result = cli("trace", "cut", str(ROOT / "examples/two-queues/cluster.yaml"), "--run-time", "gauss:3",
                 "--out", str(tmp_path / "x.yaml"))
    assert result.code == 2 and "error[F002]: --run-time 'gauss:3'" in result.err
