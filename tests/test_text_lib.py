"""Times and strings of the standard library (runtime/framework/text_lib.py): RFC 3339 text with any
offset read as seconds since the epoch, a malformed one a positioned error, and the string helpers."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fumarole.policy_lang.timestamps import rfc3339_seconds
from fumarole.runtime.framework import text_lib
from fumarole.runtime.framework.policy_error import PolicyRuntimeError
from helpers import errors

ROOT = Path(__file__).resolve().parent.parent
CLUSTER = ROOT / "examples/two-queues/cluster.yaml"


@settings(max_examples=200, deadline=None)
@given(st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 30)),
       st.integers(min_value=-23 * 60 - 59, max_value=23 * 60 + 59), st.booleans())
def test_any_offset_reads_as_the_instant_it_names(moment, offset_minutes, with_fraction):
    zone = dt.timezone(dt.timedelta(minutes=offset_minutes))
    local = moment.replace(tzinfo=zone, microsecond=moment.microsecond if with_fraction else 0)
    sign = "+" if offset_minutes >= 0 else "-"
    text = f"{local.year:04d}-" + local.strftime("%m-%dT%H:%M:%S") + (f".{local.microsecond:06d}" if with_fraction else "") \
        + f"{sign}{abs(offset_minutes) // 60:02d}:{abs(offset_minutes) % 60:02d}"
    expected = (local - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)).total_seconds()
    assert rfc3339_seconds(text) == pytest.approx(expected, abs=1e-6)
    if offset_minutes == 0:
        assert rfc3339_seconds(text[:-6] + "Z") == rfc3339_seconds(text)


@pytest.mark.parametrize("text", [
    "", "yesterday", "2026-11-27", "2026-11-27 02:00:00Z", "2026-11-27t02:00:00Z", "2026-11-27T02:00:00z",
    "2026-11-27T02:00:00", "2026-11-31T00:00:00Z", "2025-02-29T00:00:00Z", "2026-13-01T00:00:00Z",
    "2026-11-27T24:00:00Z", "2026-11-27T02:60:00Z", "2026-11-27T02:00:60Z", "2026-11-27T02:00:00+24:00",
    "2026-11-27T02:00:00+01:60", "2026-11-27T02:00:00+0100", "2026-11-27T2:00:00Z", "２026-11-27T02:00:00Z",
    " 2026-11-27T02:00:00Z", "2026-11-27T02:00:00.Z",
])
def test_what_is_not_rfc3339_is_refused(text):
    assert rfc3339_seconds(text) is None
    assert text_lib.parse_time(text) is None
    with pytest.raises(PolicyRuntimeError, match="not an RFC 3339 time"):
        text_lib.time(text)


def test_leap_days_and_year_zero():
    assert rfc3339_seconds("2024-02-29T00:00:00Z") == 1709164800.0
    assert rfc3339_seconds("1970-01-01T01:00:00+01:00") == 0.0
    assert rfc3339_seconds("0000-01-01T00:00:00Z") == -62167219200.0  # Go's year 0, a leap year


def test_the_message_about_a_huge_annotation_stays_short():
    with pytest.raises(PolicyRuntimeError) as caught:
        text_lib.time("x" * 1_000_000)
    assert len(caught.value.message) < 200


def test_string_helpers():
    assert (text_lib.lower("A100-SXM"), text_lib.upper("a100")) == ("a100-sxm", "A100")
    assert text_lib.starts_with("nvidia.com/gpu", "nvidia.com/") and not text_lib.ends_with("gpu", "GPU")
    assert text_lib.trim_prefix("gpu-a100", "gpu-") == "a100" and text_lib.trim_prefix("a100", "gpu-") == "a100"
    assert text_lib.trim_suffix("a100-80g", "-80g") == "a100" and text_lib.trim_suffix("x", "") == "x"


# -- in a policy --------------------------------------------------------------------------------------

def test_a_malformed_literal_is_an_error_where_it_is_written():
    assert errors('plugin x\n\non job_order(l, r) = 1 if time("2026-11-31T00:00:00Z") < now else 0\n') == [
        ("E142", 3, 32, "'2026-11-31T00:00:00Z' is not an RFC 3339 time, which time() needs")]
    assert errors('plugin x\n\non job_order(l, r) = 1 if time("2026-11-30T00:00:00-08:00") < now else 0\n') == []


def test_the_functions_are_typed():
    found = errors('plugin x\n\non job_order(l, r) = 1 if parse_time("x") < now and upper(3) == "" else 0\n')
    assert [code for code, *_ in found] == ["E113", "E110"]


CHECKPOINTED = """plugin checkpointed

# Only a task that checkpointed within the last 15 minutes may be reclaimed.
on reclaim_candidate(reclaimer, task) = now - time(task.annotations.get("ckpt", "1970-01-01T00:00:00Z")) <= 15m
"""
BUNDLE = """apiVersion: fumarole/v1
kind: PolicyBundle
metadata: {name: checkpointed}
uses: [volcano]
sources: [plugins/*.policy]
actions: [enqueue, allocate, reclaim]
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}, {name: checkpointed}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]
"""


def checkpoint_cluster(tmp_path: Path, stamps: dict[str, str]) -> Path:
    doc = yaml.safe_load(CLUSTER.read_text())
    for item in doc["items"]:
        if item["kind"] == "Pod" and item["metadata"]["name"] in stamps:
            item["metadata"]["annotations"]["ckpt"] = stamps[item["metadata"]["name"]]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def checkpoint_bundle(tmp_path: Path, policy: str = CHECKPOINTED) -> Path:
    (tmp_path / "b/plugins").mkdir(parents=True)
    (tmp_path / "b/bundle.yaml").write_text(BUNDLE)
    (tmp_path / "b/plugins/checkpointed.policy").write_text(policy)
    return tmp_path / "b"


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_offsets_decide_which_task_checkpointed_recently(cli, tmp_path, engine):
    # At 12:30Z: sweep-0 checkpointed at 12:00Z (13:00+01:00), sweep-1 at 12:25Z (08:25-04:00),
    # sweep-2 at 12:20:00.5Z, sweep-3 at 11:00Z.  Read without their offsets, sweep-0 would look
    # recent and sweep-1 four hours old.
    cluster = checkpoint_cluster(tmp_path, {"sweep-0": "2026-11-21T13:00:00+01:00",
                                            "sweep-1": "2026-11-21T08:25:00-04:00",
                                            "sweep-2": "2026-11-21T12:20:00.5Z", "sweep-3": "2026-11-21T11:00:00Z"})
    result = cli("run", str(cluster), "--bundle", str(checkpoint_bundle(tmp_path)), "--now", "2026-11-21T12:30:00Z",
                 "--engine", engine, "-o", "json")
    assert result.code == 0, result.err
    assert set(json.loads(result.out)["evicted"]) == {"research/sweep-1", "research/sweep-2"}


def test_a_malformed_annotation_stops_the_session_at_the_call(cli, tmp_path):
    cluster = checkpoint_cluster(tmp_path, {name: "yesterday" for name in ("sweep-0", "sweep-1", "sweep-2",
                                                                           "sweep-3")})
    result = cli("run", str(cluster), "--bundle", str(checkpoint_bundle(tmp_path)), "--now", "2026-11-21T12:30:00Z")
    assert result.code != 0
    assert "Traceback" not in result.err + result.out
    assert "checkpointed.policy:4:" in result.err and "R001" in result.err
    assert "time('yesterday'): not an RFC 3339 time" in result.err


def test_parse_time_lets_a_policy_decide_about_malformed_text(cli, tmp_path):
    cluster = checkpoint_cluster(tmp_path, {"sweep-1": "yesterday", "sweep-2": "2026-11-21T12:20:00Z",
                                            "sweep-3": "2026-11-21T13:25:00+01:00"})
    policy = ('plugin checkpointed\n\non reclaim_candidate(reclaimer, task):\n'
              '    let at = parse_time(task.annotations.get("ckpt", ""))\n    return at != none and now - at <= 15m\n')
    result = cli("run", str(cluster), "--bundle", str(checkpoint_bundle(tmp_path, policy)), "--now",
                 "2026-11-21T12:30:00Z", "-o", "json")
    assert result.code == 0, result.err
    assert set(json.loads(result.out)["evicted"]) == {"research/sweep-2", "research/sweep-3"}
