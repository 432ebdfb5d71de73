"""volcano-scheduler.conf's plain scalars resolve as gopkg.in/yaml.v2 resolves them
(resolve.go, v2.4.0), not as PyYAML does; the cluster loader keeps PyYAML's rules."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fumarole.runtime.authoring.scenario import run_file
from fumarole.runtime.ingest.scheduler_config import load_config
from fumarole.runtime.ingest.yaml_v2_scalars import resolve_plain
from fumarole.runtime.ingest.yamlpos import load

ROOT = Path(__file__).resolve().parent.parent

TABLE = [
    ("1e3", 1000.0), ("-1E-2", -0.01), ("+1", 1), ("-7", -7), ("0x1F", 31), ("-0x1f", -31), ("0o17", 15),
    ("017", 15), ("08", 8.0), ("0b101", 5), ("-0b101", -5), ("1_000", 1000), ("1__0", 10), (".5", 0.5),
    ("1.", 1.0), ("+.5e1", 5.0), ("-.inf", -math.inf), (".Inf", math.inf), ("+.INF", math.inf),
    ("9223372036854775807", (1 << 63) - 1), ("18446744073709551615", (1 << 64) - 1),
    ("+18446744073709551615", 1.8446744073709552e19), ("-9223372036854775809", -9.223372036854776e18),
    ("y", True), ("Yes", True), ("ON", True), ("true", True), ("n", False), ("NO", False), ("off", False),
    ("False", False), ("~", None), ("null", None), ("NULL", None),
    # strings: forms yaml.v2 does not read as numbers, bools or null
    ("1e999", "1e999"), (".5_0", ".5_0"), ("0x", "0x"), ("0o8", "0o8"), ("2001-12-14", "2001-12-14"),
    ("1:30", "1:30"), (".iNf", ".iNf"), ("tRUE", "tRUE"), ("yES", "yES"), ("-", "-"), ("0x1.8p1", "0x1.8p1"),
    ("_1", "_1"), ("abc", "abc"),
    # thousands of digits: no int of Go's (nor Python's int() limit), a float that overflows
    ("9" * 5000, "9" * 5000), ("0" * 5000 + "17", 15), ("1" * 300 + ".5", float("1" * 300 + ".5")),
]


@pytest.mark.parametrize(("text", "value"), TABLE, ids=[(text[:20] + f"..({len(text)})" if len(text) > 24 else text) or "empty" for text, _ in TABLE])
def test_plain_scalar_forms(text: str, value: object):
    got = resolve_plain(text)
    assert type(got) is type(value) and got == value


def test_nan_and_the_empty_scalar():
    assert math.isnan(resolve_plain(".NaN")) and resolve_plain("") is None


def test_conf_loader_resolves_as_yaml_v2_and_keeps_positions():
    config = load_config("actions: allocate\ntiers:\n- plugins:\n  - name: binpack\n    arguments:\n"
                         "      binpack.weight: 0o17\n      a: 1e3\n      b: '1e3'\n      c: on\n      d: !!str 1e3\n")
    [[plugin]] = config.tiers
    assert dict(plugin.arguments) == {"binpack.weight": 15, "a": 1000.0, "b": "1e3", "c": True, "d": "1e3"}
    assert plugin.arguments.value_pos["a"] == (7, 10)


def test_cluster_loader_keeps_pyyaml_rules():
    assert load("a: 1e3\nb: 0o17\n") == {"a": "1e3", "b": "0o17"}


_INT64 = st.integers(-(1 << 63), (1 << 63) - 1)


@settings(max_examples=60, deadline=None)
@given(_INT64, st.sampled_from(["{:d}", "{:+d}", "0x{:x}", "0X{:X}", "0o{:o}", "0{:o}", "0b{:b}"]))
def test_ints_in_every_go_base(number: int, form: str):
    sign, magnitude = ("-" if number < 0 else ""), abs(number)
    text = sign + form.format(magnitude) if form[0] == "0" else form.format(number)
    assert resolve_plain(text) == number and type(resolve_plain(text)) is int
    assert resolve_plain(text[:1] + "_" + text[1:]) == number if text[1:2].isdigit() else True


@settings(max_examples=60, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(["{!r}", "{:e}", "{:.3E}"]))
def test_finite_floats(number: float, form: str):
    text = form.format(number)
    expected: object = float(text)
    if math.isinf(expected):  # rounded past float64's range: Go's ParseFloat refuses it
        expected = text
    got = resolve_plain(text)
    assert got == expected and type(got) is type(expected)


CASE = ROOT / "tests/conformance/cases/plugins/resource-strategy-fit/authored-a-float-weight-is-truncated.yaml"


def test_a_weight_written_2e0_is_the_float_volcano_reads(tmp_path: Path):
    """``weight: 2e0`` is the float 2 to yaml.v2, which mapstructure decodes into the int weight
    2: p1 joins n2 as with 2.5 (the case above); read as PyYAML reads it, a string, it is refused."""
    case = yaml.safe_load(CASE.read_text())
    conf = yaml.safe_dump(case.pop("scheduler"), sort_keys=False).replace("weight: 2.5", "weight: 2e0")
    assert "weight: 2e0" in conf
    (tmp_path / "volcano-scheduler.conf").write_text(conf)
    case["bundle"] = "volcano-scheduler.conf"
    (tmp_path / "case.yaml").write_text(yaml.safe_dump(case, sort_keys=False))
    outcome = run_file(tmp_path / "case.yaml")
    assert outcome.passed, outcome.difference
