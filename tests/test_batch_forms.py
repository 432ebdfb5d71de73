"""Batch forms over per-node maps and fit errors: a definition taking a ``map[Node, X]`` runs over the
map's column, the largest or smallest of its values is what Python's max or min of the values gives,
and a fit error's status is asked again node by node for the failing lanes."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fumarole.policy_lang.compiler import compile_module
from fumarole.runtime.framework.node_columns import NodeMap
from fumarole.runtime.framework.vector_lib import map_max, map_min

from tests.helpers import checked

_PLUGIN = """plugin p

on batch_node_order(task, candidates):
    let raw = {n: n.idle.cpu for n in candidates}
    let top = top_of(raw)
    return {n: raw[n] / top if top > 0 else 0.0 for n in candidates}

def top_of(raw: map[Node, float]) -> float = max(0.0, max(raw.values())) if len(raw) > 0 else 0.0
"""


def test_a_definition_over_a_per_node_map_has_a_batch_form_over_its_column():
    source = compile_module(checked(_PLUGIN)).source
    batch = source[source.index("def _bf_top_of_M"):].splitlines()
    assert batch[1].strip() == "return max(0.0, _V.map_max(v_raw_1)) if len(v_raw_1) > 0 else 0.0"
    assert "v_top = _bf_top_of_M(v_raw)" in source


_floats = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, -0.0, math.nan])


@settings(max_examples=300, deadline=None)
@given(st.lists(_floats, min_size=1, max_size=12))
def test_the_largest_and_smallest_values_are_pythons(values):
    mapping = NodeMap(None, np.array(values, dtype=float))
    for batch_form, builtin in ((map_max, max), (map_min, min)):
        got, want = batch_form(mapping), builtin(values)
        assert type(got) is float and repr(got) == repr(want), (batch_form.__name__, values)


def test_the_eviction_actions_node_check_has_a_batch_form():
    """preempt_predicate reads `failure.unresolvable` of the predicate hook's answer: over lanes the
    hook is asked again node by node for the failing lanes alone (same decisions: the differential
    tests run preempt and reclaim)."""
    from fumarole.runtime.bundles.bundle import build_bundle
    from fumarole.runtime.ingest.scheduler_config import config_from_document

    bundle = build_bundle(config_from_document({"actions": "enqueue, allocate, reclaim",
                                                "tiers": [{"plugins": [{"name": "gang"}, {"name": "predicates"},
                                                                       {"name": "proportion"}]}]}))
    source = bundle.actions["reclaim"].module.source
    assert "f_preempt_predicate.batch = _bf_preempt_predicate_SN" in source
    batch = source[source.index("def _bf_preempt_predicate_SN"):].splitlines()
    assert any("_f is not None and _f.unresolvable" in line and "_V.per_lane(" in line for line in batch[:8])
