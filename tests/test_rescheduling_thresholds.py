"""rescheduling's lowNodeUtilization thresholds: low_node_utilization.go ``parse`` reads each with a
bare ``k.(string)`` / ``v.(int)``, which panics -- in the sessions the strategy runs, those where
``interval`` has passed and ``shuffle`` asks for victims (rescheduling_util.go ``timeToRun``).  With
an interval of 0 or less that is every session: no Volcano decision exists, a C012 error
(runtime/bundles/refusals.py).  Otherwise a warning, the entry left out (docs/diagnostics.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CLUSTER = ROOT / "examples" / "cluster.yaml"


def _conf(tmp_path: Path, interval: str = "0s", actions: str = "allocate, shuffle", switches: str = "",
          thresholds: str = "{cpu: 20.5, memory: 30}", targets: str = "{cpu: 'y'}") -> Path:
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(f'actions: "{actions}"\ntiers:\n- plugins:\n  - name: predicates\n'
                    f"  - name: rescheduling{switches}\n    arguments:\n      interval: {interval}\n"
                    "      strategies:\n      - name: lowNodeUtilization\n        params:\n"
                    f"          thresholds: {thresholds}\n          targetThresholds: {targets}\n")
    return conf


def test_a_threshold_that_panics_in_every_session_is_an_error(cli, tmp_path):
    conf = _conf(tmp_path)
    run = cli("run", str(CLUSTER), "--config", str(conf), "-o", "json")
    assert run.code == 2 and run.out == "" and "Traceback" not in run.err
    lines = run.err.splitlines()
    assert lines[0] == (f"{conf}:11:29: error[C012]: argument 'strategies/0/params/thresholds/cpu' of plugin "
                        "'rescheduling' must be an int, not 20.5 (lowNodeUtilization runs in every session: the "
                        "interval is 0 or less and shuffle asks for victims)")
    assert "  hint: Volcano's lowNodeUtilization panics on it (`v.(int)`): give an integer" in lines
    # parse panics on thresholds before it reads targetThresholds: that one stays a warning
    assert any(line.startswith(f"{conf}:12:35: warning[C012]") for line in lines)
    assert cli("check", str(conf)).code == 1


@pytest.mark.parametrize("change", [
    {"interval": "5m"},  # skips sessions: the first, and any within 5m of the last run
    {"actions": "allocate"},  # nothing asks for victims
    {"switches": "\n    enabledVictim: false"},
    {"thresholds": "5"},  # not a mapping: parse stops there, before targetThresholds' bad entry
])
def test_a_threshold_read_only_in_some_sessions_or_never_is_a_warning(cli, tmp_path, change):
    conf = _conf(tmp_path, **change)
    run = cli("run", str(CLUSTER), "--config", str(conf), "-o", "json")
    assert run.code == 0, run.err
    assert run.err and all("warning[C012]" in line for line in run.err.splitlines())


def test_a_text_key_and_an_int_are_read(cli, tmp_path):
    conf = _conf(tmp_path, thresholds="{cpu: 20, memory: 30}", targets="{cpu: 50}")
    assert cli("check", str(conf)).code == 0
    bad_key = _conf(tmp_path, thresholds="{1: 20}", targets="{cpu: 50}")
    check = cli("check", str(bad_key))
    assert check.code == 1 and "must be a text key, not 1 (lowNodeUtilization runs in every session" in check.out


def test_a_null_thresholds_is_no_mapping(cli, tmp_path):
    """parse type-asserts ``thresholds`` to a mapping, which a nil fails ("abort the configuration
    parse"), as a text does: the entry is left out, and the targets after it are not read (the
    rescheduling/authored-a-null-thresholds-* case shows the decision)."""
    conf = _conf(tmp_path, interval="5m", thresholds="null", targets="{cpu: 50}")
    check = cli("check", str(conf))
    assert check.code == 0
    assert "argument 'strategies/0/params/thresholds' of plugin 'rescheduling' must be a mapping" in check.out


def test_a_thresholds_key_in_another_case_is_not_read(cli, tmp_path):
    """parse looks ``thresholds`` up in the Params map by its exact key: ``Thresholds`` is never
    read, so its value cannot panic; it is an unknown argument (C010)."""
    conf = _conf(tmp_path, targets="{cpu: 50}")
    conf.write_text(conf.read_text().replace("thresholds: {cpu: 20.5", "Thresholds: {cpu: 20.5"))
    check = cli("check", str(conf))
    assert check.code == 0, check.out
    assert "warning[C010]: plugin 'rescheduling' has no argument 'strategies/0/params/Thresholds'" in check.out


@pytest.mark.parametrize("strategies, names", [
    ("[{name: lowNodeUtilization, params: {}}, {name: lowNodeUtilization, params: 'x'}]",
     {"0": "lowNodeUtilization", "1": ""}),  # the last one does not decode: the first runs
    ("[{name: 5}]", {"0": ""}),  # a list whose items all fail replaces the default strategy: none runs
    ("[~, {params: {1: x}, name: lowNodeUtilization}]", {"0": "", "1": ""}),  # the zero Strategy; a key no text
    ("{a: {name: lowNodeUtilization}}", {}),  # no list: the default strategy
])
def test_a_strategy_that_does_not_decode_names_none(strategies, names):
    """rescheduling.go parseArguments: ``strategies.([]interface{})``, then ``mapstructure.Decode`` of
    each item into a Strategy, leaving out one that fails."""
    from fumarole.runtime.bundles.bundle import build_bundle
    from fumarole.runtime.ingest.scheduler_config import load_config

    text = ("actions: shuffle\ntiers:\n- plugins:\n  - name: rescheduling\n    arguments:\n"
            f"      strategies: {strategies}\n")
    bundle = build_bundle(load_config(text, "v.conf"))
    rescheduling = next(e for tier in bundle.tiers for e in tier if e.name == "rescheduling")
    assert rescheduling.arguments["strategy_names"] == names


@pytest.mark.parametrize("strategy", [
    "{name: other, Name: lowNodeUtilization, params: {thresholds: {cpu: 7}}}",
    "{Name: lowNodeUtilization, name: other, Params: {thresholds: {cpu: 7}}, params: {thresholds: {cpu: 1}}}",
])
def test_a_strategy_field_written_twice_is_read_by_its_go_name(strategy):
    """mapstructure.Decode into rescheduling.go's Strategy looks ``Name`` and ``Params`` up by those
    exact Go names first, and only then ignoring case: ``Name`` wins over ``name``."""
    from fumarole.runtime.bundles.bundle import build_bundle
    from fumarole.runtime.ingest.scheduler_config import load_config

    text = ("actions: shuffle\ntiers:\n- plugins:\n  - name: rescheduling\n    arguments:\n"
            f"      strategies: [{strategy}]\n")
    bundle = build_bundle(load_config(text, "v.conf"))
    rescheduling = next(e for tier in bundle.tiers for e in tier if e.name == "rescheduling")
    assert rescheduling.arguments["strategy_names"] == {"0": "lowNodeUtilization"}
    assert rescheduling.arguments["low_thresholds"] == {"0": {"cpu": 7}}
