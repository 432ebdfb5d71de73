"""Bounded fuzzing of the two YAML readers the other fuzzers do not reach: a HyperNode's members
(``runtime/ingest/hypernodes.py``) and a scenario's ``processState`` block
(``runtime/authoring/process_state_input.py``).  Whatever the shapes and values, the reader
accepts the input or reports each problem as a positioned diagnostic of its family -- never an
exception, in bounded time.  Cluster documents, traces and sweeps are fuzzed in
``test_fuzz_inputs.py`` and ``test_whatif_hostile.py``.
"""

from __future__ import annotations

import time

import yaml
from fumarole.policy_lang.diagnostics import Diagnostic, FumaroleError
from fumarole.policy_lang.types import Type
from fumarole.runtime.authoring.process_state_input import KEYS, PENDING_POD_KEYS, read_process_state
from fumarole.runtime.ingest.kube import load_cluster
from fumarole.runtime.ingest.yamlpos import load
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

BUDGET = settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
SECONDS = 10

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**40, max_value=2**40),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8),
                     st.sampled_from(["n1", "s1", "0-3,8", "3-1", "n.*", "(?=x)", "[", "2026-01-01T00:00:00Z"]))
VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                      max_leaves=6)


def _positioned(diagnostics: list[Diagnostic], codes: str, text: str) -> None:
    for diagnostic in diagnostics:
        assert diagnostic.code[0] in codes, diagnostic.headline()
        assert diagnostic.span.line >= 1 and diagnostic.span.col >= 1, diagnostic.headline()
        diagnostic.render(text)


# -- HyperNode members -------------------------------------------------------------------------------

_SELECTOR = st.one_of(
    VALUES,
    st.fixed_dictionaries({}, optional={"exactMatch": st.one_of(VALUES, st.fixed_dictionaries({"name": VALUES})),
                                        "regexMatch": st.one_of(VALUES, st.fixed_dictionaries({"pattern": VALUES})),
                                        "labelMatch": VALUES}))
_MEMBER = st.one_of(VALUES, st.fixed_dictionaries({"type": st.sampled_from(["Node", "HyperNode"]),
                                                    "selector": _SELECTOR}),
                    st.fixed_dictionaries({}, optional={"type": VALUES, "selector": _SELECTOR}))
_WELL_FORMED = st.fixed_dictionaries({"tier": st.integers(min_value=0, max_value=3),
                                      "members": st.lists(_MEMBER, min_size=1, max_size=4)})
_SPEC = st.one_of(_WELL_FORMED, _WELL_FORMED, _WELL_FORMED, VALUES, st.fixed_dictionaries({}, optional={
    "tier": st.one_of(st.integers(min_value=-2, max_value=3), VALUES), "members": st.one_of(
        st.lists(_MEMBER, max_size=4), VALUES)}))


@BUDGET
@given(st.lists(_SPEC, min_size=1, max_size=3))
def test_any_hyper_node_loads_or_is_refused_with_a_position(specs):
    objects = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}]
    objects += [{"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": f"s{i}"},
                 "spec": spec} for i, spec in enumerate(specs)]
    text = yaml.safe_dump_all(objects)
    started = time.perf_counter()
    try:
        cluster = load_cluster(text, "fuzz.yaml")
    except FumaroleError as err:
        assert err.diagnostics
        _positioned(err.diagnostics, "K", text)
    else:
        _positioned(list(cluster.warnings), "K", text)
    assert time.perf_counter() - started < SECONDS


# -- a scenario's processState -------------------------------------------------------------------------

DECLARED = {"tdm": {"last_eviction": Type("float", optional=True)}, "gang": {}}
_PENDING_POD = st.one_of(VALUES, st.fixed_dictionaries({}, optional={
    **{key: VALUES for key in PENDING_POD_KEYS}, "cpus": st.one_of(VALUES, st.dictionaries(
        st.sampled_from(["cpu", "x"]), st.one_of(st.sampled_from(["0-3", "3-1", "a"]), VALUES), max_size=2))}))
_BLOCK = st.one_of(VALUES, st.fixed_dictionaries({}, optional={
    "predicateStartIndex": st.one_of(st.integers(min_value=-3, max_value=10), VALUES),
    "plugins": st.one_of(VALUES, st.dictionaries(st.sampled_from(["tdm", "gang", "tmd"]), st.one_of(
        VALUES, st.dictionaries(st.sampled_from(["last_eviction", "last"]), VALUES, max_size=2)), max_size=3)),
    "numaPending": st.one_of(VALUES, st.dictionaries(st.sampled_from(["n1", "n2"]), st.one_of(
        VALUES, st.dictionaries(st.sampled_from(["uid-1", "uid-2"]), _PENDING_POD, max_size=2)), max_size=2)),
    "startIndex": VALUES}))


@BUDGET
@given(_BLOCK)
def test_any_process_state_is_read_or_refused_with_a_position(block):
    text = yaml.safe_dump({"processState": block})
    started = time.perf_counter()
    state, diagnostics = read_process_state(load(text)["processState"], DECLARED, "case.yaml")
    _positioned(diagnostics, "S", text)
    assert {d.code for d in diagnostics} <= {"S030"}
    if not diagnostics:  # what was accepted is what the block said
        assert isinstance(block, dict) and set(block) <= set(KEYS)
        assert state.predicate_start_index == block.get("predicateStartIndex", 0)
    assert time.perf_counter() - started < SECONDS
