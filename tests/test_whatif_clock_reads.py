"""Replay knows how long a session's clock comparisons hold: which policies read `now` only through
comparisons it can follow, and the instant each comparison would flip."""

from __future__ import annotations

import datetime
import math
import operator
import os
import time
from pathlib import Path

import numpy
import pytest
from fumarole.runtime.framework import go_semantics, vector_lib
from fumarole.runtime.bundles.bundle import bundle_from_conf_text, load_bundle
from fumarole.runtime.whatif.clock import clock_use
from fumarole.runtime.whatif.clock_flow import LINEAR, NONE, OPAQUE
from fumarole.runtime.whatif.clock_flow import clock_use as source_use
from fumarole.runtime.whatif.clock_reads import ClockWatch, WatchedClock
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent


def _conf(*plugins: str, actions: str = "enqueue, allocate, backfill") -> str:
    return f"actions: {actions}\ntiers:\n- plugins:\n" + "".join(f"  - name: {p}\n" for p in plugins)


@pytest.mark.parametrize(("conf", "use"), [
    (_conf("priority", "gang", "drf", "proportion"), NONE),
    (_conf("cdp"), LINEAR),  # cooldown: since + cooldown > now
    (_conf("sla"), LINEAR),  # waited = now - creation, compared with the waiting time
    # A revocable zone's window: floor(now) against local_time(now, ...), and the last eviction kept.
    (_conf("tdm"), LINEAR),
    (_conf("rescheduling"), LINEAR),  # the last run kept in process state, compared next session
    (_conf("usage"), LINEAR),  # the batch form compares the clock with a column of metric times
    # Victims' start, through a lambda passed to keep_best and a map of its scores.
    (_conf("priority", actions="enqueue, allocate, preempt"), LINEAR),
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
    "return _go_sort(v_t, lambda v_x: g_0)",  # a lambda handed to a library function
    "return [g_0][0] > 1",  # a container
    "return g_0 in v_t",  # not an order
    "return g_0 is v_t",  # its identity with something else than None
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


def test_a_clock_kept_in_a_global_or_passed_to_a_library_function_is_opaque():
    kept = """
def __build__(_rt):
    def _hook(v_t):
        global s_last
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


_FUNCTION_VALUES = """
def __build__(_rt, _H, _args):
    _B = _budget_of(_rt)
    s_last = _rt.process_state.plugin_value('p', 'last', None)
    g_0 = _rt.now
    def f_start(v_t):
        return v_t.start if v_t.started else g_0
    def f_best(v_ns, v_score):
        v_scores = {v_n: _B.called(v_score)(v_n) for v_n in v_ns}
        v_top = v_scores[v_ns[0]]
        for v_n_1 in v_ns:
            v_top = max(v_top, v_scores[v_n_1])
        return [v_n_2 for v_n_2 in v_ns if v_scores[v_n_2] == v_top]
    def f_pick(v_ns_1):
        v_by = f_best(v_ns_1, lambda v_n_3: f_start(v_n_3))
        v_ages = [g_0 - f_start(v_n_4) for v_n_4 in v_ns_1]
        return f_best(v_by, f_start)[0] if v_ages[0] > 60 else None
    def _hook_open():
        nonlocal s_last
        v_last = s_last if s_last is not None else g_0
        s_last = g_0 if v_last + 300 < g_0 else v_last
        return _math.floor(g_0) < _go.local_time(g_0, 0, 600)
    return {'open': _hook_open, 'pick': f_pick, '__process_state__': lambda: {'last': s_last}}
"""


def test_the_clock_is_followed_through_function_values_containers_steps_and_process_state():
    """preempt's keep_best(nodes, fn(n) => start(n)) and its map of scores, a policy function passed
    as a value, tdm's floor(now) against local_time(now, ...), a last run kept as process state."""
    assert source_use(_FUNCTION_VALUES) == LINEAR


@pytest.mark.parametrize(("old", "new"), [
    ("return [v_n_2 for", "return sorted(v_scores) or [v_n_2 for"),  # the container passed on
    ("v_scores[v_ns[0]]", "v_scores.get(v_ns[0])"),  # read otherwise than by an index
    ("{v_n: _B.called(v_score)(v_n)", "{_B.called(v_score)(v_n): v_n"),  # a clock as a key
    ("f_best(v_ns_1, lambda", "f_best(v_ns_1, v_score=lambda"),  # passed by keyword
    ("f_best(v_by, f_start)", "_go_sort(v_by, f_start)"),  # a function value to a library function
    ("'pick': f_pick,", "'pick': f_pick, 'start': f_start,"),  # a function value handed to the runtime
    ("{'last': s_last}", "{'last': [s_last]}"),  # kept inside a container
    ("_math.floor(g_0) <", "_math.floor(g_0) % 7 <"),  # a step of the clock, not followed further
    ("_go.local_time(g_0, 0, 600)", "_go.local_time(600, 0, g_0)"),  # an argument local_time does not watch
])
def test_any_other_use_of_a_function_value_container_or_step_is_opaque(old, new):
    assert old in _FUNCTION_VALUES
    assert source_use(_FUNCTION_VALUES.replace(old, new)) == OPAQUE


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
    class Odd:
        def __rsub__(self, other):
            return 1.0
    watch = ClockWatch(100.0)
    assert watch.now() - Odd() == 1.0 and watch.opaque and watch.steady_until() == 100.0
    watch = ClockWatch(100.0)
    assert watch.now() * watch.now() == 10000.0 and watch.opaque  # not linear
    watch = ClockWatch(100.0)
    assert math.floor(watch.now()) % 7 == 2 and watch.opaque  # a step's arithmetic
    watch = ClockWatch(100.0)
    assert math.floor(watch.now()) < watch.now() + 1 and watch.opaque  # a step against the clock
    watch = ClockWatch(100.0)
    lanes = watch.now() - numpy.array([10.0, 90.0])
    assert not watch.opaque and lanes[0] == 90.0 and watch.opaque  # a lane read out of the column
    watch = ClockWatch(100.0)
    assert list(numpy.sort(watch.now() - numpy.array([90.0, 10.0]))) == [10.0, 90.0] and watch.opaque
    watch = ClockWatch(100.0)
    assert list(numpy.exp(watch.now() - numpy.array([100.0]))) == [1.0] and watch.opaque  # another ufunc


@settings(max_examples=200, deadline=None)
@given(at=st.integers(0, 10**6), slope=st.sampled_from([-2.0, -1.0, 0.5, 1.0, 3.0]),
       shift=st.floats(-1e4, 1e4, allow_nan=False), bound=st.floats(-1e6, 1e6, allow_nan=False),
       op=st.sampled_from(_OPS), later=st.floats(0.0, 1.0))
def test_a_step_of_the_clock_holds_until_the_instant_it_records(at, slope, shift, bound, op, later):
    """`floor(slope * now + shift)  op  bound` (tdm's `floor(now) < opens`): the outcome at any
    instant before the recorded one is the outcome at the session's instant."""
    def outcome(now):
        return op(math.floor(now * slope + shift), bound)
    watch = ClockWatch(float(at))
    assert op(math.floor(watch.now() * slope + shift), bound) == outcome(at)
    horizon = min(watch.steady_until(), at + 10**7)
    if horizon > at:
        for fraction in (later, 1.0):
            assert outcome(at + fraction * (horizon - at)) == outcome(at)
    assert not watch.opaque


@settings(max_examples=200, deadline=None)
@given(at=st.integers(0, 10**6), slope=st.sampled_from([-1.0, 1.0, 2.0]),
       stamps=st.lists(st.one_of(st.none(), st.integers(-10**6, 2 * 10**6)), min_size=1, max_size=6),
       bound=st.integers(-10**6, 10**6), op=st.sampled_from(_OPS), reflected=st.booleans(),
       later=st.floats(0.0, 1.0))
def test_a_column_of_clocks_holds_until_the_instant_it_records(at, slope, stamps, bound, op, reflected, later):
    """usage's batch form, `present(now - present(metrics_time)) <= 5m` over a node column (none
    where a node has no metrics): no lane's outcome changes before the recorded instant."""
    column = numpy.array([math.nan if s is None else float(s) for s in stamps], dtype=object)
    def outcome(now):
        ages = now * slope - vector_lib.present(column).astype(float)
        return list(op(bound, ages) if reflected else op(ages, bound))
    watch = ClockWatch(float(at))
    ages = vector_lib.present(watch.now() * slope - vector_lib.present(column))
    assert list(op(bound, ages) if reflected else op(ages, bound)) == outcome(at)
    horizon = min(watch.steady_until(), at + 10**7)
    if horizon > at:
        assert outcome(at + later * (horizon - at)) == outcome(at)
    assert not watch.opaque


def test_local_time_holds_until_the_next_local_midnight():
    """tdm's window: local_time(now, ...) is the same all day; on a day the UTC offset changes
    (daylight saving), it promises nothing."""
    zone = os.environ.get("TZ")
    os.environ["TZ"] = "Europe/Berlin"
    time.tzset()
    try:
        noon = datetime.datetime(2026, 6, 10, 12, 0).timestamp()
        watch = ClockWatch(noon)
        assert go_semantics.local_time(watch.now(), 0, 600) == noon - 2 * 3600
        assert watch.steady_until() == pytest.approx(noon + 12 * 3600 - 1e-3)
        changing = datetime.datetime(2026, 3, 29, 12, 0).timestamp()  # summer time begins that night
        watch = ClockWatch(changing)
        go_semantics.local_time(watch.now(), 1, 0)
        assert watch.steady_until() < changing
    finally:
        if zone is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = zone
        time.tzset()
