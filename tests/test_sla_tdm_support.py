"""The Go parsers behind the sla and tdm policies, and those policies end to end."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import time
from pathlib import Path

import pytest
import yaml
from fumarole.runtime.authoring.scenario import load_scenario, run_scenario
from fumarole.runtime.framework import dispatch, go_semantics
from fumarole.runtime.framework.lifecycle import new_session, open_session
from fumarole.runtime.ingest.kube_convert import pod_revocable_zone

NS = 1e-9


# -- time.ParseDuration (cases from Go's time_test.go) ------------------------------------

@pytest.mark.parametrize("text, seconds", [
    ("0", 0), ("5s", 5), ("30s", 30), ("1478s", 1478), ("-5s", -5), ("+5s", 5), ("-0", 0), ("+0", 0),
    ("5.0s", 5), ("5.6s", 5.6), ("5.s", 5), (".5s", 0.5), ("1.004s", 1.004), ("100.00100s", 100.001),
    ("10ns", 10 * NS), ("11us", 11e-6), ("12µs", 12e-6), ("12μs", 12e-6), ("13ms", 0.013), ("15m", 900),
    ("16h", 57600), ("3h30m", 12600), ("10.5s4m", 250.5), ("-2m3.4s", -123.4),
    ("1h2m3s4ms5us6ns", 3723.004005006), ("39h9m14.425s", 39 * 3600 + 9 * 60 + 14.425),
    ("0.3333333333333333333h", 1200), ("9223372036854775807ns", 9223372036.854775807),
    ("-9223372036854775808ns", -9223372036.854775808),
])
def test_parse_duration_accepts_what_go_accepts(text, seconds):
    assert go_semantics.parse_duration(text) == pytest.approx(seconds, abs=1e-9)


@pytest.mark.parametrize("text", [
    "", "3", "1", "-", "s", ".", "-.", ".s", "+.s", "1d", "5 s", " 5s", "5s ", "1.5", "\x85\x85", "\xffff",
    "9223372036854775808ns", "9223372036854775.808us", "9223372036854ms775us808ns", "-9223372036854775809ns",
])
def test_parse_duration_rejects_what_go_rejects(text):
    assert go_semantics.parse_duration(text) is None


def test_parse_duration_keeps_nanoseconds():
    assert go_semantics._duration_nanos(b"1h2m3s4ms5us6ns") == 3_723_004_005_006
    assert go_semantics._duration_nanos(b"0.3333333333333333333h") == 20 * 60 * 10**9


# -- time.Parse("15:04"), strings.TrimSpace --------------------------------------------------

@pytest.mark.parametrize("text, minutes", [
    ("0:00", 0), ("00:00", 0), ("7:05", 425), ("07:05", 425), ("23:59", 1439), ("12:30", 750),
])
def test_parse_clock(text, minutes):
    assert go_semantics.parse_clock(text) == minutes


@pytest.mark.parametrize("text", ["", "0", "1:0", "1:000", "24:00", "63:59", "12:60", " 1:00", "1:00 ",
                                  "001:00", "1.00", "a:00", "-1:00", "1:-0"])
def test_parse_clock_rejects(text):
    assert go_semantics.parse_clock(text) is None


def test_trim_space_is_gos():
    assert go_semantics.trim_space("  \t1:00-0:00\u00a0\n") == "1:00-0:00"
    assert go_semantics.trim_space("\x1c1:00") == "\x1c1:00"  # not white space for Go


# -- time.Date in time.Local -------------------------------------------------------------------

@pytest.fixture
def paris():
    """The process time zone set to one with daylight saving, then restored."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = "Europe/Paris"
    time.tzset()
    yield
    if old is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = old
    time.tzset()


def test_local_time_is_the_wall_clock_of_the_local_date(paris):
    t = dt.datetime(2026, 3, 29, 15, 45, 12).timestamp()  # clocks went forward at 02:00
    assert go_semantics.local_time(t, 0, 0) == dt.datetime(2026, 3, 29, 0, 0).timestamp()
    assert go_semantics.local_time(t, 0, 10 * 60 + 30) == dt.datetime(2026, 3, 29, 10, 30).timestamp()
    assert go_semantics.local_time(t, 1, 0) - go_semantics.local_time(t, 0, 0) == 23 * 3600
    assert go_semantics.local_time(t, 1, 0) == dt.datetime(2026, 3, 30, 0, 0).timestamp()


def test_local_time_crosses_month_ends():
    t = dt.datetime(2026, 12, 31, 23, 59).timestamp()
    assert go_semantics.local_time(t, 1, 60) == dt.datetime(2027, 1, 1, 1, 0).timestamp()


# -- IntOrString budgets ------------------------------------------------------------------------

@pytest.mark.parametrize("value, total, want", [
    ("3", 5, 3), ("+3", 5, 3), ("-1", 5, -1), ("0", 5, 0), ("4294967297", 5, 1),
    ("30%", 5, 2), ("99%", 5, 5), ("50%", 5, 3), ("90%", 5, 5), ("0%", 5, 0), ("30%%", 5, 2), ("%30", 5, 2),
    ("", 5, None), ("abc", 5, None), ("3.5", 5, None), ("3.5%", 5, None), (" 3", 5, None), ("1_0", 5, None),
])
def test_int_or_percent(value, total, want):
    assert go_semantics.int_or_percent(value, total) == want


# -- pod annotations, combinator ------------------------------------------------------------------

@pytest.mark.parametrize("annotations, zone", [
    ({}, ""), ({"volcano.sh/revocable-zone": "*"}, "*"), ({"volcano.sh/revocable-zone": "rz1"}, ""),
    ({"volcano.sh/preemptable": "true"}, "*"), ({"volcano.sh/preemptable": "false"}, ""),
    ({"volcano.sh/preemptable": "yes"}, ""),
    ({"volcano.sh/revocable-zone": "rz1", "volcano.sh/preemptable": "true"}, ""),
])
def test_pod_revocable_zone(annotations, zone):
    assert pod_revocable_zone(annotations) == zone


def test_a_failing_node_order_plugin_zeroes_the_score():
    score = dispatch.sum_([[lambda t, n: 30.0], [lambda t, n: None, lambda t, n: 5]])
    assert score("t", "n") == 0.0
    assert dispatch.sum_([[lambda t, n: 30.0, lambda t, n: 5]])("t", "n") == 35.0


# -- the policies in a session ---------------------------------------------------------------------

def _node(name: str, zone: str = "") -> dict:
    labels = {"volcano.sh/revocable-zone": zone} if zone else {}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "10"},
                       "capacity": {"cpu": "16", "memory": "64Gi", "pods": "10"}}}


def _pod(name: str, group: str, node: str = "", cpu: str = "1", **annotations: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"uid": f"c1-{name}", "namespace": "c1", "name": name,
                         "annotations": {"scheduling.k8s.io/group-name": group, **annotations}},
            "spec": {"nodeName": node, "containers": [{"resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]},
            "status": {"phase": "Running" if node else "Pending"}}


def _pod_group(name: str, created: str | None = None, min_member: int = 0, min_cpu: str | None = None,
               **annotations: str) -> dict:
    meta = {"namespace": "c1", "name": name, "annotations": dict(annotations)}
    if created:
        meta["creationTimestamp"] = created
    spec: dict = {"queue": "c1", "minMember": min_member}
    if min_cpu:
        spec["minResources"] = {"cpu": min_cpu, "memory": "1Gi"}
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": meta, "spec": spec,
            "status": {"phase": "Pending"}}


QUEUE = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "c1"},
         "spec": {"weight": 1}, "status": {"state": "Open"}}


def _run(tmp_path: Path, scheduler: dict, objects: list, now: float, hooks: list | None = None):
    doc = {"name": "t", "scheduler": scheduler, "objects": objects}
    doc.update({"expectHooks": hooks} if hooks is not None else {"expect": {}})
    path = tmp_path / "case.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    scenario = dataclasses.replace(load_scenario(path), now=now)
    return scenario, run_scenario(scenario)


def _tdm(zone: str, period: str = "1m") -> dict:
    return {"name": "tdm", "enabledVictim": True, "enablePredicate": True, "enableNodeOrder": True,
            "arguments": {"tdm.revocable-zone.rz1": zone, "tdm.evict.period": period}}


def _revocable_cluster() -> list:
    pods = [_pod(f"p{i}", "pg1", "n1", **{"volcano.sh/preemptable": "true"}) for i in range(1, 4)]
    pods.append(_pod("p4", "pg1", "n1", **{"volcano.sh/preemptable": "false"}))
    pods.append(_pod("p5", "pg1", "n2", **{"volcano.sh/preemptable": "true"}))
    return [_node("n1", "rz1"), _node("n2"), *pods,
            _pod_group("pg1", **{"volcano.sh/jdb-max-unavailable": "50%"}), QUEUE]


def _today(hour: int, minute: int = 0) -> float:
    return dt.datetime.combine(dt.date.today(), dt.time(hour, minute)).timestamp()


def test_shuffle_evicts_from_a_closed_zone_within_the_budget(tmp_path):
    scheduler = {"actions": "shuffle", "tiers": [{"plugins": [_tdm("10:00-11:00")]}]}
    _, outcome = _run(tmp_path, scheduler, _revocable_cluster(), _today(12))
    evicted = outcome.decisions.evictions
    # 50% of 5 tasks is 3 (rounded up); p4 is not preemptable, p5 is on an ordinary node.
    assert sorted(evicted) == [("c1/p1", "shuffle"), ("c1/p2", "shuffle"), ("c1/p3", "shuffle")]


def test_shuffle_leaves_an_open_zone_alone(tmp_path):
    scheduler = {"actions": "shuffle", "tiers": [{"plugins": [_tdm("10:00-11:00")]}]}
    _, outcome = _run(tmp_path, scheduler, _revocable_cluster(), _today(10, 30))
    assert outcome.decisions.evictions == []


def test_a_window_crossing_midnight_closes_at_midnight(tmp_path):
    scheduler = {"actions": "shuffle", "tiers": [{"plugins": [_tdm("22:00-6:00")]}]}
    _, late = _run(tmp_path, scheduler, _revocable_cluster(), _today(23))
    _, early = _run(tmp_path, scheduler, _revocable_cluster(), _today(3))
    assert late.decisions.evictions == []
    assert len(early.decisions.evictions) == 3


def _victim_rounds(tmp_path: Path, period: str) -> tuple[list, list]:
    """Two calls of victim_tasks in one session, the zone closed."""
    scheduler = {"actions": "", "tiers": [{"plugins": [_tdm("10:00-11:00", period)]}]}
    scenario, _ = _run(tmp_path, scheduler, _revocable_cluster(), _today(12), hooks=[])
    ssn = new_session(scenario.bundle, scenario.cluster, now=scenario.now)
    open_session(ssn, "test")
    return ssn.H.victim_tasks([]), ssn.H.victim_tasks([])


@pytest.mark.parametrize("period, again", [("soon", 0), ("1h30", 0), ("0", 3), ("-1s", 3)])
def test_an_evict_period_go_does_not_read_keeps_one_minute(tmp_path, period, again):
    """tdm.go New keeps time.Minute where time.ParseDuration fails ('soon', '1h30': a second round
    right away finds nothing); Go reads '0' and '-1s', a period that has always passed."""
    first, second = _victim_rounds(tmp_path, period)
    assert len(first) == 3 and len(second) == again


def test_victim_tasks_waits_an_evict_period_between_rounds(tmp_path):
    scheduler = {"actions": "", "tiers": [{"plugins": [_tdm("10:00-11:00", "1m")]}]}
    scenario, _ = _run(tmp_path, scheduler, _revocable_cluster(), _today(12), hooks=[])
    ssn = new_session(scenario.bundle, scenario.cluster, now=scenario.now)
    open_session(ssn, "test")
    assert len(ssn.H.victim_tasks([])) == 3
    assert ssn.H.victim_tasks([]) == []


def test_sla_admits_a_job_that_waited_past_its_waiting_time(tmp_path):
    now = dt.datetime(2026, 5, 1, 12, 0, tzinfo=dt.timezone.utc).timestamp()
    objects = [_node("n1"), _pod("a", "late", cpu="100"), _pod("b", "early", cpu="100"),
               _pod_group("late", "2026-05-01T11:55:00Z", 1, "100"),
               _pod_group("early", "2026-05-01T11:59:00Z", 1, "100"), QUEUE]
    scheduler = {"actions": "enqueue", "tiers": [
        {"plugins": [{"name": "sla", "enableJobEnqueued": True, "enableJobOrder": True,
                      "arguments": {"sla-waiting-time": "3m"}}]},
        {"plugins": [{"name": "overcommit", "enableJobEnqueued": True}]}]}
    _, outcome = _run(tmp_path, scheduler, objects, now)
    assert outcome.decisions.phases == {"c1/late": "Inqueue", "c1/early": "Pending"}


def test_sla_annotation_beats_the_argument(tmp_path):
    now = dt.datetime(2026, 5, 1, 12, 0, tzinfo=dt.timezone.utc).timestamp()
    objects = [_pod_group("a", "2026-05-01T11:00:00Z", **{"sla-waiting-time": "30m"}),
               _pod_group("b", "2026-05-01T11:50:00Z", **{"volcano.sh/sla-waiting-time": "5m",
                                                           "sla-waiting-time": "1h"}),
               _pod_group("c", "2026-05-01T11:00:00Z", **{"volcano.sh/sla-waiting-time": "bad"}), QUEUE]
    scheduler = {"actions": "", "tiers": [{"plugins": [
        {"name": "sla", "enableJobOrder": True, "arguments": {"sla-waiting-time": "2h"}}]}]}
    hooks = [  # deadlines: a 11:30, b 11:55, c 13:00 (falls back to the argument)
        {"hook": "jobOrderCompare", "left": "c1/a", "right": "c1/b", "result": -1},
        {"hook": "jobOrderCompare", "left": "c1/c", "right": "c1/b", "result": 1},
    ]
    _, outcome = _run(tmp_path, scheduler, objects, now, hooks)
    assert outcome.passed, outcome.difference
