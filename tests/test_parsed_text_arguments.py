"""Arguments Volcano's plugins hand, as text, to a parser with a fallback: durations through Go's
time.ParseDuration (tdm.go New's ``tdm.evict.period``, rescheduling.go parseArguments' ``interval``,
extender.go's ``extender.httpTimeout``, sla.go's ``sla-waiting-time``) and quantities through
resource.ParseQuantity (usage.go parseBestEffortCPU / -Memory's ``be_cpu`` / ``be_mem``).  A text the
parser does not read keeps the plugin's default -- silently in Volcano, with a positioned C012
warning here, exit code as for any warning.  tdm's and rescheduling's are also ``asserted`` (a bare
``v.(string)``): a value that is not a text is still an error (tests/test_text_list_arguments.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fumarole.runtime.bundles.arguments import convert_argument
from fumarole.runtime.bundles.bundle import build_bundle
from fumarole.runtime.framework.go_semantics import duration_text, parse_duration
from fumarole.runtime.ingest.scheduler_config import load_config

ROOT = Path(__file__).resolve().parent.parent
CLUSTER = ROOT / "examples" / "cluster.yaml"

HEAD = 'actions: "enqueue, allocate, backfill"\ntiers:\n- plugins: [{name: priority}, {name: gang}]\n' \
       '- plugins:\n  - name: predicates\n'


@pytest.mark.parametrize("plugin, key, default", [
    ("tdm", "tdm.evict.period", "1m0s"),
    ("rescheduling", "interval", "5m0s"),
    ("extender", "extender.httpTimeout", "1s"),
    ("sla", "sla-waiting-time", "0s")])
def test_a_text_go_does_not_read_as_a_duration_keeps_the_default_with_a_warning(cli, tmp_path, plugin, key, default):
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(HEAD + f"  - name: {plugin}\n    arguments:\n      {key}: 1h30\n")
    col = len(f"      {key}: ") + 1
    warning = (f"{conf}:8:{col}: warning[C012]: argument '{key}' of plugin '{plugin}' must be a duration, "
               f"not '1h30'; the default {default} is used")
    check = cli("check", str(conf))
    assert check.code == 0 and warning in check.out.splitlines()
    assert "hint: Go's time.ParseDuration does not read it" in check.out
    assert cli("check", "--fail-on", "warning", str(conf)).code == 1
    run = cli("run", str(CLUSTER), "--config", str(conf), "-o", "json")
    assert run.code == 0 and run.err.splitlines() == [warning]
    assert "binds" in json.loads(run.out)


def test_sla_reads_a_go_duration_and_leaves_a_non_positive_one_unset():
    text = HEAD + "  - name: sla\n    arguments:\n      sla-waiting-time: 1h2m3s4ms5µs6ns\n"
    bundle = build_bundle(load_config(text, "v.conf"))
    sla = next(e for tier in bundle.tiers for e in tier if e.name == "sla")
    assert sla.arguments["waiting_time"] == 3723.004005006 and bundle.warnings == ()


_UNITS = st.sampled_from(["ns", "us", "µs", "ms", "s", "m", "h"])
_UNIT_NANOS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 10**6, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9}


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["", "-", "+"]), st.lists(st.tuples(st.integers(0, 10**4), _UNITS), min_size=1, max_size=4))
def test_a_go_duration_text_is_read_to_the_nanosecond(sign, parts):
    """Whole-number parts in any of Go's units, a sign before them: what ParseDuration sums."""
    text = sign + "".join(f"{n}{unit}" for n, unit in parts)
    nanos = sum(n * _UNIT_NANOS[unit] for n, unit in parts) * (-1 if sign == "-" else 1)
    ok, seconds = convert_argument(text, "duration")
    assert ok and round(seconds * 1e9) == nanos


@settings(max_examples=60, deadline=None)
@given(st.integers(-(10**15), 10**15))
def test_a_kept_default_is_named_as_go_prints_it_and_reads_back(nanos):
    """duration_text is Go's Duration.String: ParseDuration reads it back to the same nanosecond."""
    text = duration_text(nanos / 1e9)
    assert round(parse_duration(text) * 1e9) == round(nanos / 1e9 * 1e9)
    assert " " not in text and (text == "0s") == (round(nanos / 1e9 * 1e9) == 0)


@pytest.mark.parametrize("value", ["", "1h30", "1 m", "1d", "5", "m", ".s", 60, 1.5, True, None, ["1m"]])
def test_what_go_does_not_read_is_no_duration(value):
    assert convert_argument(value, "duration")[0] is False


@pytest.mark.parametrize("value, ok", [("250m", True), ("1.5Gi", True), ("2.007", True), ("-1", True), ("1e3", True),
                                       ("1 Gi", False), ("", False), ("lots", False), ("1GB", False), (3, False),
                                       (None, False)])
def test_a_quantity_argument_is_a_text_kubernetes_reads_kept_as_written(value, ok):
    assert convert_argument(value, "quantity") == (ok, value)


@pytest.mark.parametrize("key, default", [("be_cpu", "'250m'"), ("be_mem", "'200Mi'")])
def test_a_best_effort_text_that_is_no_quantity_keeps_the_default_with_a_warning(cli, tmp_path, key, default):
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(HEAD + f"  - name: usage\n    arguments:\n      estimator:\n        {key}: lots\n")
    warning = (f"{conf}:9:{len(f'        {key}: ') + 1}: warning[C012]: argument 'estimator/{key}' of plugin 'usage' "
               f"must be a quantity, not 'lots'; the default {default} is used")
    check = cli("check", str(conf))
    assert check.code == 0 and warning in check.out.splitlines()
    assert "hint: Kubernetes' resource.ParseQuantity does not read it" in check.out
    run = cli("run", str(CLUSTER), "--config", str(conf), "-o", "json")
    assert run.code == 0 and run.err.splitlines() == [warning]
    bundle = build_bundle(load_config(conf.read_text(), "v.conf"))
    usage = next(e for tier in bundle.tiers for e in tier if e.name == "usage")
    assert usage.arguments["be_cpu"] == "250m" and usage.arguments["be_mem"] == "200Mi"


@pytest.mark.parametrize("value", ["1h30", "-20m", "0s", "30"])
def test_a_metrics_interval_that_is_not_a_positive_duration_keeps_30s_with_a_warning(cli, tmp_path, value):
    """The scheduler's metrics collection (cache.go) and usage's delay window (usage.go OnSessionOpen)
    take metrics.interval only when ParseDuration reads it above 0; otherwise both keep 30s, silently."""
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(f"metrics:\n  interval: '{value}'\n" + HEAD + "  - name: usage\n")
    warning = (f"{conf}:2:13: warning[C012]: metrics.interval must be a positive duration, not '{value}'; "
               "the default 30s is used")
    check = cli("check", str(conf))
    assert check.code == 0 and warning in check.out.splitlines()
    assert cli("check", "--fail-on", "warning", str(conf)).code == 1
    run = cli("run", str(CLUSTER), "--config", str(conf), "-o", "json")
    assert run.code == 0 and run.err.splitlines() == [warning]


def test_a_positive_metrics_interval_is_read_without_a_word():
    bundle = build_bundle(load_config("metrics:\n  interval: 1m30s\n" + HEAD + "  - name: usage\n", "v.conf"))
    assert bundle.warnings == ()


@pytest.mark.parametrize("value", ["{a: [1, 2]}", "[30s]"])
def test_a_metrics_setting_that_is_a_mapping_or_a_list_is_an_error(cli, tmp_path, value):
    """yaml.v2 cannot read a mapping or a list into the metrics block's map[string]string, and
    UnmarshalSchedulerConf refuses the configuration."""
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(f"metrics:\n  interval: {value}\n" + HEAD + "  - name: usage\n")
    check = cli("check", str(conf))
    assert check.code == 1 and "Traceback" not in check.out + check.err
    assert (f"{conf}:2:13: error[C003]: metrics.interval must be a single value (Volcano reads the metrics "
            "block as texts)") in check.out.splitlines()
    assert "warning[C012]" not in check.out
    run = cli("run", str(CLUSTER), "--config", str(conf))
    assert run.code == 2 and "error[C003]: metrics.interval" in run.err
