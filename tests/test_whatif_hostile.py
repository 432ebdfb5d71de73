"""Hostile traces and sweep files: each one positioned error and exit 2, in bounded time and memory,
never a traceback; and the trace and sweep front doors fuzzed (bounded)."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
import yaml
from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.whatif.sweep import MAX_SWEEP_RUNS, load_sweep
from fumarole.runtime.whatif import trace as trace_module
from fumarole.runtime.whatif.trace import load_trace
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
SUBMIT = """- at: 0s
  submit:
    podGroup: {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: a, namespace: d},
               spec: {queue: default}}
    tasks:
    - replicas: REPLICAS
      pod: {metadata: {name: p}, spec: {containers: [{name: c, image: i}]}}
"""


@pytest.mark.parametrize("text, expected", [
    ("kind: Trace\nevents:\n" + SUBMIT.replace("REPLICAS", "100000000"),
     r"t\.yaml:8:17: error\[T002\]: replicas 100,000,000 would take the trace past 200 pods"),
    ("kind: Trace\nevents:\n" + SUBMIT.replace("REPLICAS", "150") + SUBMIT.replace("REPLICAS", "60"),
     r"t\.yaml:15:17: error\[T002\]: replicas 60 would take the trace past 200 pods"),
    ("kind: Trace\nevents:\n- at: .inf\n  delete: a/b\n",
     r"t\.yaml:3:7: error\[T003\]: event 0: at must be a duration .* at most 100 years, not inf"),
    ("kind: Trace\nevents:\n- at: 1e300\n  delete: a/b\n", r"t\.yaml:3:7: error\[T003\]: event 0: at must be"),
    ("kind: Trace\nevents:\n- at: 9999999999h\n  delete: a/b\n", r"t\.yaml:3:7: error\[T003\]: event 0: at must be"),
    ("kind: Trace\nruntimes: {}\nrunTimes: {a/b: .nan}\n", r"t\.yaml:2:1: error\[T002\]: unknown trace key"),
    ("kind: Trace\nrunTimes: {a/b: .nan}\n", r"t\.yaml:2:17: error\[T003\]: runTimes\[a/b\] must be a duration"),
    ("kind: Trace\nstart: '9999-12-31T00:00:00Z'\n", r"t\.yaml:2:8: error\[T003\]: start must be an RFC 3339 time"),
    ("kind: Trace\ncluster: binary.dat\n",
     r"t\.yaml:2:10: error\[F001\]: cannot read the trace's cluster 'binary\.dat': not UTF-8 text \(byte 0xff"),
    ("kind: Trace\ncluster: /etc/passwd\n",
     r"t\.yaml:2:10: error\[F001\]: cannot read the trace's cluster '/etc/passwd': it must be a path relative"),
    ("kind: Trace\ncluster: ../../../../../../etc/passwd\n",
     r"t\.yaml:2:10: error\[F001\]: cannot read the trace's cluster .*: it must be in the trace's folder"),
    ("kind: Trace\ncluster: outside.yaml\n",
     r"t\.yaml:2:10: error\[F001\]: cannot read the trace's cluster .*: it must be in the trace's folder"),
    ("kind: Trace\ncluster: ''\n", r"t\.yaml:2:10: error\[F001\]: cannot read the trace's cluster '': not a regular file"),
    ("kind: Trace\ncluster: endless\n",
     r"t\.yaml:2:10: error\[F001\]: cannot read the trace's cluster 'endless': not a regular file"),
])
def test_a_hostile_trace_is_one_positioned_error(cli, tmp_path, monkeypatch, text, expected):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(trace_module, "MAX_TRACE_PODS", 200)  # the limit, scaled down: the sum is what counts
    Path("binary.dat").write_bytes(b"kind: List\n\xff\xfe" + os.urandom(64))
    Path("outside.yaml").symlink_to("/etc/passwd")  # a link in the folder naming a file outside it
    os.mkfifo("endless")  # a reader that opened it would wait forever
    Path("t.yaml").write_text(text)
    started = time.perf_counter()
    result = cli("replay", "t.yaml", "--out", "out")
    assert time.perf_counter() - started < 30
    assert result.code == 2, result.err
    assert re.match(expected, result.err), result.err
    assert "Traceback" not in result.err and "root:" not in result.err  # nothing of a foreign file is shown


def test_a_sweep_asking_for_ten_billion_replays_through_aliases_is_refused_up_front(cli, tmp_path):
    text = "kind: Sweep\ntraces: [t.yaml]\nbundles: [b]\ngrid:\n  a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n"
    text += "".join(f"  {key}: *a\n" for key in "bcdefghij")
    spec = tmp_path / "sweep.yaml"
    spec.write_text(text)
    started = time.perf_counter()
    result = cli("sweep", str(spec), "--out", str(tmp_path / "out"))
    assert time.perf_counter() - started < 30
    assert result.code == 2
    assert re.match(r".*sweep\.yaml:5:3: error\[T004\]: the sweep asks for 10,000,000,000 replays \(traces x "
                    r"bundles x grid points\), more than 10,000", result.err), result.err


@pytest.mark.parametrize("option", ["period: 0", "maxWall: 0s", "until: .inf", "grace: -1"])
def test_sweep_options_out_of_range_are_refused(tmp_path, option):
    spec = tmp_path / "sweep.yaml"
    spec.write_text(f"kind: Sweep\ntraces: [t.yaml]\nbundles: [b]\noptions: {{{option}}}\n")
    with pytest.raises(FumaroleError) as err:
        load_sweep(spec)
    assert err.value.diagnostics[0].code == "T003" and err.value.diagnostics[0].span.line == 4


# -- fuzzing: the trace and sweep front doors ----------------------------------------------------------

BUDGET = settings(max_examples=30, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                         HealthCheck.function_scoped_fixture])
HOSTILE = st.sampled_from([None, True, -1, 0, 10**30, 1e308, float("inf"), float("nan"), "", "x" * 300, ".inf",
                           "9999999999h", "-5s", "1h30m", [], {}, [[]], {"a": {}}, "../x", "/dev/zero", "\x00"])
TRACE_PATHS = [("start",), ("cluster",), ("runTimes",), ("events",), ("events", 0), ("events", 0, "at"),
               ("events", 0, "submit"), ("events", 0, "submit", "tasks"), ("events", 0, "submit", "tasks", 0),
               ("events", 0, "submit", "tasks", 0, "replicas"), ("events", 0, "submit", "tasks", 0, "runTime"),
               ("events", 0, "submit", "tasks", 0, "pod"), ("events", 0, "submit", "podGroup"),
               ("events", 1, "delete"), ("events", 2, "addNode"), ("events", 3, "removeNode"), ("metadata",)]
SWEEP_PATHS = [("traces",), ("bundles",), ("grid",), ("grid", "minRuntime"), ("options",), ("options", "period"),
               ("options", "until"), ("options", "onEvict"), ("kind",)]


def _replaced(doc, path, value):
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def _mutated(base: str, paths, mutations) -> str:
    doc = yaml.safe_load(base)
    for which, value in mutations:
        try:
            _replaced(doc, paths[which % len(paths)], value)
        except (KeyError, IndexError, TypeError):
            continue
    return yaml.safe_dump(doc, allow_unicode=True)


def _refused_with_a_position(load, path: Path) -> None:
    started = time.perf_counter()
    try:
        load(path)
    except FumaroleError as err:
        assert err.diagnostics
        for diagnostic in err.diagnostics:
            assert diagnostic.code[0] in "TKFC", diagnostic.headline()
            assert diagnostic.span.line >= 1 and diagnostic.span.col >= 1, diagnostic.headline()
    assert time.perf_counter() - started < 30


BASE_TRACE = (ROOT / "examples/traces/two-queues.yaml").read_text().replace(
    "events:\n", "events:\n- {at: 1s, delete: a/b}\n- {at: 2s, addNode: {apiVersion: v1, kind: Node, "
    "metadata: {name: n9}}}\n- {at: 3s, removeNode: n9}\n", 1)


@BUDGET
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=100), HOSTILE), min_size=1, max_size=4))
def test_fuzzed_traces_load_or_are_refused_with_a_position(tmp_path_factory, mutations):
    path = tmp_path_factory.mktemp("trace") / "t.yaml"
    path.write_text(_mutated(BASE_TRACE, TRACE_PATHS, mutations))
    _refused_with_a_position(load_trace, path)


BASE_SWEEP = "kind: Sweep\ntraces: [t.yaml]\nbundles: [b]\ngrid: {minRuntime: [5m, 1h]}\noptions: {period: 60s}\n"


@BUDGET
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=100),
                          st.one_of(HOSTILE, st.lists(st.integers(), min_size=1, max_size=30))), max_size=4))
def test_fuzzed_sweeps_load_or_are_refused_with_a_position(tmp_path_factory, mutations):
    path = tmp_path_factory.mktemp("sweep") / "sweep.yaml"
    path.write_text(_mutated(BASE_SWEEP, SWEEP_PATHS, mutations))
    _refused_with_a_position(lambda p: len(load_sweep(p)) <= MAX_SWEEP_RUNS or pytest.fail("too many"), path)
