"""Replay knows how long a session's clock comparisons hold: which policies read `now` only through
comparisons it can follow, and the instant each comparison would flip."""

from __future__ import annotations

import math
import operator
from pathlib import Path

import pytest
from fumarole.runtime.bundles.bundle import bundle_from_conf_text, load_bundle
from fumarole.runtime.whatif.clock import clock_use
from fumarole.runtime.whatif.clock_reads import LINEAR, NONE, OPAQUE, ClockWatch, WatchedClock
from fumarole.runtime.whatif.clock_reads import clock_use as source_use
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent


def _conf(*plugins: str, actions: str = "enqueue, allocate, backfill") -> str:
    return f"actions: {actions}\ntiers:\n- plugins:\n" + "".join(f"  - name: {p}\n" for p in plugins)


@pytest.mark.parametrize(("conf", "use"), [
    (_conf("priority", "gang", "drf", "proportion"), NONE),
    (_conf("cdp"), LINEAR),  # cooldown: since + cooldown > now
    (_conf("sla"), LINEAR),  # waited = now - creation, compared with the waiting time
    (_conf("tdm"), OPAQUE),  # the local wall clock of a revocable zone, and the last eviction kept
    (_conf("rescheduling"), OPAQUE),  # the last run kept in process state
    (_conf("usage"), OPAQUE),  # the batch form compares the clock with a column of metric times
    (_conf("priority", actions="enqueue, allocate, preempt"), OPAQUE),  # victims' start, via a lambda
])
def test_the_standard_library_reads_the_clock_as_replay_knows(conf, use):
    assert clock_use(bundle_from_conf_text(conf, "volcano-scheduler.conf")) == use


def test_a_site_minimum_run_time_reads_the_clock_through_a_comparison():
    assert clock_use(load_bundle(ROOT / "examples/site-min-runtime")) == LINEAR


_LINEAR = """
def __build__(_rt):
    g_0 = _rt.now
    def f_age(v_t):
        return g_0 - v_t.start if v_t.started else 0.0
    def f_oldest(v_ts):
        v_a = f_age(v_ts[0])
        v_a += 1.0
        return max(v_a, _div(-f_age(v_ts[1]) * 2, 3))
    def _hook(v_t):
        return f_oldest(v_t) >= 600 and 5 < g_0 + 1 <= 10
    return {'hook': _hook}
"""


@pytest.mark.parametrize("use", [
    "return _k8s.floor(g_0) > 1",  # a library function's argument
    "return (lambda: g_0)() > 1",  # a lambda
    "return [g_0][0] > 1",  # a container
    "return g_0 is None",  # not an order
    "return g_0 // 60 > 1",  # not linear
    "return g_0 if g_0 > 1 else 0",  # a hook's result goes to the runtime
    "return 1 if g_0 else 0",  # its truth
    "return f'{g_0}' == ''",  # its text
])
def test_any_other_use_of_the_clock_is_opaque(use):
    assert source_use(_LINEAR) == LINEAR
    source = f"""
def __build__(_rt):
    g_0 = _rt.now
    def _hook(v_t):
        {use}
    return {{'hook': _hook}}
"""
    assert source_use(source) == OPAQUE


def test_a_clock_kept_past_the_call_or_passed_as_a_function_is_opaque():
    kept = """
def __build__(_rt):
    s_last = None
    def _hook(v_t):
        nonlocal s_last
        s_last = _rt.now
        return True
    return {'hook': _hook}
"""
    passed = """
def __build__(_rt):
    def f_now():
        return _rt.now
    def _hook(v_ts):
        return sorted(v_ts, key=f_now)
    return {'hook': _hook}
"""
    assert source_use(kept) == OPAQUE and source_use(passed) == OPAQUE
    assert source_use("def __build__(_rt):\n    return {'stamp': _rt.stamp_time}\n") == NONE


_OPS = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]


@settings(max_examples=300, deadline=None)
@given(at=st.integers(0, 10**9), slope=st.sampled_from([-3.0, -1.0, 0.5, 1.0, 2.0]),
       shift=st.integers(-10**6, 10**6), bound=st.integers(-10**6, 10**6), flip=st.booleans(),
       op=st.sampled_from(_OPS), later=st.floats(0.0, 1.0))
def test_a_comparison_holds_until_the_instant_it_records(at, slope, shift, bound, flip, op, later):
    """`slope * now + shift  op  bound` (either side): the outcome at any instant before the recorded
    one is the outcome at the session's instant, and the recorded instant is the true flip, early
    by a millisecond at most."""
    def outcome(now):
        value = now * slope + shift
        return op(bound, value) if flip else op(value, bound)
    watch = ClockWatch(float(at))
    now = watch.now()
    value = now * slope + shift
    assert isinstance(value, WatchedClock) and float(value) == at * slope + shift
    assert (op(bound, value) if flip else op(value, bound)) == outcome(at)
    crossing = (bound - shift) / slope
    if crossing > at + 1e-6:
        assert watch.until == pytest.approx(crossing - 1e-3, abs=1e-5)
    elif crossing < at - 1e-6:
        assert watch.until == math.inf
    else:  # equal now: the outcome may change at once
        assert watch.until < at
    horizon = min(watch.until, at + 10**7)
    if horizon > at:
        assert outcome(at + later * (horizon - at)) == outcome(at)
    assert not watch.opaque and watch.steady_until() == watch.until


def test_the_clock_against_an_unknown_operand_is_opaque():
    import numpy
    watch = ClockWatch(100.0)
    ages = watch.now() - numpy.array([10.0, 90.0])
    assert list(ages) == [90.0, 10.0] and watch.opaque and watch.steady_until() == 100.0
    watch = ClockWatch(100.0)
    assert list(numpy.array([10.0, 90.0]) < watch.now()) == [True, True] and watch.opaque
    watch = ClockWatch(100.0)
    assert watch.now() * watch.now() == 10000.0 and watch.opaque  # not linear
    watch = ClockWatch(100.0)
    assert math.floor(watch.now() / 7) == 14 and watch.opaque
