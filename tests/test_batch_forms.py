"""Batch forms over per-node maps and fit errors: a definition taking a ``map[Node, X]`` runs over the
map's column, the largest or smallest of its values is what Python's max or min of the values gives,
and a fit error's status is asked again node by node for the failing lanes."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fumarole.policy_lang.driver import compile_checked
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
    source = compile_checked(checked(_PLUGIN)).source
    batch = source[source.index("def _bf_top_of_M"):].splitlines()
    assert batch[1].strip() == "return max(0.0, _V.map_max(v_raw_1)) if len(v_raw_1) > 0 else 0.0"
    assert "v_top = _bf_top_of_M(v_raw)" in source


_RANKED = """plugin p

on batch_node_order(task, candidates):
    let rank = ranked(candidates)
    let most = max(0, max(rank.values())) if len(rank) > 0 else 0
    return {n: float(rank[n] * 10 / most) if most > 0 else 0.0 for n in candidates}

# A loop carrying a value from node to node: no batch form.
def ranked(candidates: list[Node]) -> map[Node, int]:
    let seen = 0
    let out: map[Node, int] = {}
    for n in candidates:
        seen += 1
        out[n] = seen
    return out
"""


def test_a_definition_over_a_node_list_without_a_batch_form_runs_once_as_per_node_code_into_a_column():
    compiled = compile_checked(checked(_RANKED))
    assert compiled.batch_fallbacks == []  # the hook keeps its batch form (no W230)
    assert "_V.per_node_map(f_ranked, (0,), (v_candidates,))" in compiled.source


def test_a_per_node_map_from_per_node_code_is_a_column_and_a_node_left_out_a_missing_key():
    import pytest

    from fumarole.runtime.framework.vector_lib import per_node_map

    columns = _columns(3)
    batch = columns.all_batch()
    ranked = per_node_map(lambda nodes: {n: i + 1 for i, n in enumerate(nodes)}, (0,), (batch,))
    assert ranked.column.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(KeyError):
        per_node_map(lambda nodes: {nodes[0]: 1}, (0,), (batch,))


def _columns(count: int):
    from fumarole.runtime.api.model import Node
    from fumarole.runtime.api.resource import Resource
    from fumarole.runtime.framework.node_columns import NodeColumns
    from fumarole.runtime.k8s.view import K8sView

    nodes = [Node(f"n{i}", Resource(1000.0, 1e9), Resource(1000.0, 1e9), {}, {}, {}, [], False, [])
             for i in range(count)]
    return NodeColumns(nodes, K8sView(nodes))


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
    tests run preempt and reclaim); while the hook is row-local for the task, the helper reads the
    check from a memo per pod spec (tests/test_row_memo.py)."""
    from fumarole.runtime.bundles.bundle import build_bundle
    from fumarole.runtime.ingest.scheduler_config import config_from_document

    bundle = build_bundle(config_from_document({"actions": "enqueue, allocate, reclaim",
                                                "tiers": [{"plugins": [{"name": "gang"}, {"name": "predicates"},
                                                                       {"name": "proportion"}]}]}))
    source = bundle.actions["reclaim"].module.source
    assert "_rt.batch_forms.add(f_preempt_predicate, _BatchForm(_bf_preempt_predicate_SN, row_local=" in source
    batch = source[source.index("def _bf_preempt_predicate_SN"):].splitlines()
    assert any("_f is not None and _f.unresolvable" in line and "_V.per_lane(" in line for line in batch[:8])


def _balance_by_definition(requested, allocatable, pod) -> int:
    """NodeResourcesBalancedAllocation's balance, restated from its definition by resource name."""
    from fumarole.runtime.k8s.noderesources import BALANCED_RESOURCES

    fractions = [min(requested.get(name) / allocatable.get(name), 1.0) for name in BALANCED_RESOURCES
                 if (name in ("cpu", "memory") or pod.get(name) != 0) and allocatable.get(name) != 0]
    spread = 0.0
    if len(fractions) == 2:
        spread = abs(fractions[0] - fractions[1]) / 2
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        spread = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
    return int((1 - spread) * 100)


_amounts = st.sampled_from([0.0, 0.5, 100.0, 1000.0, 32000.0, 1e9, 2**40, 1e300])
_resources = st.builds(lambda cpu, memory, gpu: (cpu, memory, gpu), _amounts, _amounts, st.none() | _amounts)


def _resource(amounts):
    from fumarole.runtime.api.resource import Resource

    cpu, memory, gpu = amounts
    return Resource(cpu, memory, None if gpu is None else {"nvidia.com/gpu": gpu})


@settings(max_examples=300, deadline=None)
@given(_resources, st.lists(st.tuples(_resources, st.lists(_resources, max_size=3)), min_size=1, max_size=6))
def test_balanced_allocation_node_by_node_and_over_lanes_is_its_definition(pod, nodes):
    """The scorer's scalar form (spelled out per resource) and its lane-wise form give the score
    the definition by resource name gives, huge numbers, missing GPUs and zero capacities included."""
    from types import SimpleNamespace

    from fumarole.runtime.api.model import Node
    from fumarole.runtime.api.resource import Resource
    from fumarole.runtime.framework.node_columns import NodeColumns
    from fumarole.runtime.framework.vector_lib import _balanced_or_lanes
    from fumarole.runtime.k8s.noderesources import balanced_allocation_score
    from fumarole.runtime.k8s.view import K8sView

    task = SimpleNamespace(request=_resource(pod))
    built = [Node(f"n{i}", _resource(a), _resource(a), {}, {}, {}, [], False, []) for i, (a, _) in enumerate(nodes)]
    columns = NodeColumns(built, K8sView(built))
    for node, (_, pods) in zip(built, nodes):
        node.view_pods = {f"p{j}": SimpleNamespace(request=_resource(p), pod={}) for j, p in enumerate(pods)}
    lanes = _balanced_or_lanes(None, task, columns.all_batch()).tolist()
    for node, lane in zip(built, lanes):
        requested = Resource()
        for other in node.view_pods.values():
            requested.add(other.request)
        if all(task.request.get(name) == 0 for name in ("cpu", "memory", "nvidia.com/gpu")):
            want = 0  # a pod requesting none of them is skipped
        else:
            after = requested.clone().add(task.request)
            want = 50 + (50 + _balance_by_definition(after, node.allocatable, task.request)
                         - _balance_by_definition(requested, node.allocatable, task.request)) // 2
        assert balanced_allocation_score(task, node) == want and lane == want, (node.name, pod)


_BUILTIN_OVER_A_NODE = """plugin p

on node_order(task, node) = float(listed(node))

def listed(node: Node) -> int = len(node.allocatable.scalar_names) if node.allocatable.cpu > 0 else 0
"""


def test_a_builtin_called_on_a_node_attribute_compiles_to_a_per_node_fallback():
    """A built-in (len) over a node's list has no lane-wise form: it runs per lane, and the compiler
    does not stumble on the built-in's own name."""
    source = compile_checked(checked(_BUILTIN_OVER_A_NODE)).source
    assert "def _bf_listed" in source


_GUARDED = """plugin p

on predicate(task, node):
    fail "zone b" when "zone" in node.labels and node.labels["zone"] == "b"
    let rack = node.labels["rack"] if "rack" in node.labels else "none"
    fail "rack r1" when rack == "r1"
    fail "no rack" when not ("rack" in node.labels or node.name == "n0")
"""


def test_a_part_the_per_node_code_does_not_reach_is_not_run_for_that_node():
    """The right side of `and` / `or` and a conditional's branches run, lane by lane, only for the
    nodes that reach them: a label read behind `"zone" in node.labels` is never read on a node
    without it (the batch form used to stop there with a KeyError and hand over to per-node code)."""
    from types import SimpleNamespace

    from fumarole.runtime.api.model import Node
    from fumarole.runtime.api.resource import Resource
    from fumarole.runtime.framework.batch_forms import BatchForms
    from fumarole.runtime.framework.namespace import namespace
    from fumarole.runtime.framework.node_columns import NodeColumns
    from fumarole.runtime.k8s.view import K8sView

    compiled = compile_checked(checked(_GUARDED))
    assert ":= " in compiled.source  # the lanes reaching a part are held for its lane-by-lane code
    scope = namespace()
    exec(compiled.code, scope)
    runtime = SimpleNamespace(batch_forms=BatchForms(checked=True))
    hooks = scope["__build__"](runtime, SimpleNamespace(), {})
    labels = [{}, {"zone": "a"}, {"zone": "b", "rack": "r2"}, {"rack": "r1"}, {"rack": "r2"}]
    nodes = [Node(f"n{i}", Resource(1000.0, 1e9), Resource(1000.0, 1e9), {}, found, {}, [], False, [])
             for i, found in enumerate(labels)]
    columns = NodeColumns(nodes, K8sView(nodes))
    task = SimpleNamespace()
    lanes = runtime.batch_forms.of(hooks["predicate"]).run(task, columns.all_batch()).tolist()
    assert lanes == [hooks["predicate"](task, node) is not None for node in nodes] == [False, True, True, True, False]


def test_a_definition_over_node_lists_hands_over_to_per_node_code_only_at_a_policy_failure():
    """Its batch form stopping at a policy failure (a missing key) runs the per-node code, which
    raises it at its policy line or, answering, shows the engines disagree; any other failure of a
    batch form is a bug and surfaces; checking the engines compares every answer."""
    import pytest

    from fumarole.runtime.api.model import Node
    from fumarole.runtime.api.resource import Resource
    from fumarole.runtime.framework.batch_dispatch import batched_definition
    from fumarole.runtime.framework.batch_forms import EngineDisagreement
    from fumarole.runtime.framework.node_columns import NodeColumns
    from fumarole.runtime.k8s.view import K8sView

    nodes = [Node(f"n{i}", Resource(1000.0, 1e9), Resource(1000.0, 1e9), {}, {}, {}, [], False, [])
             for i in range(3)]
    columns = NodeColumns(nodes, K8sView(nodes))

    def per_node(listed):
        return len(listed)

    def raising(error):
        def batch(listed):
            raise error
        return batch
    for checked in (False, True):
        assert batched_definition(per_node, lambda listed: len(listed.rows), (0,), columns, checked)(nodes) == 3
    assert batched_definition(per_node, raising(KeyError("zone")), (0,), columns, False)(nodes) == 3
    with pytest.raises(EngineDisagreement, match="KeyError"):
        batched_definition(per_node, raising(KeyError("zone")), (0,), columns, True)(nodes)
    with pytest.raises(TypeError, match="a fast-engine bug"):
        batched_definition(per_node, raising(TypeError("a fast-engine bug")), (0,), columns, False)(nodes)
    with pytest.raises(EngineDisagreement, match="4 .batch. against 3 .per node."):
        batched_definition(per_node, lambda listed: 4, (0,), columns, True)(nodes)


_AT_NAMES = """plugin p

state free: map[string, int]
state zone: map[string, string]

on predicate(task, node):
    fail "busy" when node.name in free and free[node.name] < 2
    fail "zone b" when zone.get(node.name, "a") == "b"
"""


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.sampled_from(["n0", "n1", "n2", "n3", "x"]), st.integers(-3, 3)),
       st.dictionaries(st.sampled_from(["n0", "n1", "n2", "n3", "x"]), st.sampled_from(["a", "b", ""])))
def test_plugin_state_read_at_the_nodes_name_is_gathered_by_name_only_for_the_lanes_reaching_it(free, zone):
    """`S[node.name]` and `S.get(node.name, d)` over lanes read the map at the batch's names
    (no per-lane call of per-node code): `free[...]` only where `node.name in free` holds, so a
    node missing from the map raises nothing; every lane answers as the per-node code does."""
    from types import SimpleNamespace

    from fumarole.runtime.framework.batch_forms import BatchForms
    from fumarole.runtime.framework.namespace import namespace

    compiled = compile_checked(checked(_AT_NAMES))
    assert "_V.at_names(s_free, _N, " in compiled.source and "_V.get_at_names(s_zone, _N, " in compiled.source
    scope = namespace()
    exec(compiled.code, scope)
    runtime = SimpleNamespace(batch_forms=BatchForms(checked=True), row_state=lambda state: state)
    hooks = scope["__build__"](runtime, SimpleNamespace(), {})
    state = hooks["__state__"]()
    state["free"].update(free)
    state["zone"].update(zone)
    columns = _columns(4)
    task = SimpleNamespace()
    for batch in (columns.all_batch(), columns.all_batch().subset(np.array([True, False, True, True]))):
        lanes = runtime.batch_forms.of(hooks["predicate"]).run(task, batch).tolist()
        assert lanes == [hooks["predicate"](task, node) is not None for node in batch.nodes]


_lane_answers = st.sampled_from([True, False, 0, 2, -1.5, "x", None, (1,)])


@settings(max_examples=80, deadline=None)
@given(st.lists(_lane_answers, min_size=4, max_size=4), st.lists(st.booleans(), min_size=4, max_size=4),
       st.booleans(), st.sampled_from(["V", "E"]))
def test_per_lane_code_gets_each_lanes_values_and_its_answers_make_the_column_lane_by_lane_would(
        answers, mask, masked, kind):
    """per_lane gathers each argument once (a node batch's nodes, a column's Python values, a plain
    value as is) and runs the per-node code for the lanes the mask keeps; the column is bool when
    every answer is a bool, float when every one is a number, else the answers themselves (none
    where no lane ran), and for failures whether each lane answered something."""
    from fumarole.runtime.framework.vector_lib import per_lane

    batch = _columns(4).all_batch()
    numbers, flags = np.array([1.0, 2.0, 3.0, 4.0]), np.array([True, False, True, False])
    seen = []

    def lane_code(node, number, flag, plain):
        seen.append((node.name, number, flag, plain))
        return answers[int(node.name[1:])]
    out = per_lane(lane_code, batch, np.array(mask) if masked else None, kind, batch, numbers, flags, "k")
    lanes = [i for i in range(4) if mask[i] or not masked]
    assert seen == [(f"n{i}", numbers[i].item(), flags[i].item(), "k") for i in lanes]
    assert all(type(v) in (float, bool) for _, number, flag, _ in seen for v in (number, flag))
    ran = [answers[i] for i in lanes]
    if kind == "E":
        assert out.tolist() == [i in lanes and answers[i] is not None for i in range(4)]
    elif all(isinstance(a, bool) for a in ran):
        assert out.dtype == bool and out.tolist() == [i in lanes and answers[i] for i in range(4)]
    elif all(isinstance(a, (int, float)) and not isinstance(a, bool) for a in ran):
        assert out.dtype == float and out.tolist() == [answers[i] if i in lanes else 0.0 for i in range(4)]
    else:
        assert out.dtype == object and out.tolist() == [answers[i] if i in lanes else None for i in range(4)]


_SWITCHED = """plugin switched
arg remember: bool = false
state asked: map[string, int]

on predicate(task, node):
    if remember:
        asked[node.name] = asked.get(node.name, 0) + 1
    fail "full" when node.idle.cpu < 1.0
"""


def test_a_block_with_an_effect_under_an_argument_costs_the_batch_form_only_where_it_is_switched_on():
    """A top-level `if` on arguments alone whose block changes state (a switch) is left out of the
    hook's batch form: the builder registers the form in a session where the switch is off, and
    marks the hook node-by-node only (no form, no per-row memo) where it is on."""
    from types import SimpleNamespace

    from fumarole.runtime.framework.batch_forms import BatchForms
    from fumarole.runtime.framework.namespace import namespace

    compiled = compile_checked(checked(_SWITCHED))
    assert compiled.batch_fallbacks == []
    for remember in (False, True):
        scope = namespace()
        exec(compiled.code, scope)
        runtime = SimpleNamespace(batch_forms=BatchForms(checked=True))
        hooks = scope["__build__"](runtime, SimpleNamespace(), {"remember": remember})
        form = runtime.batch_forms.of(hooks["predicate"])
        assert (form is None, runtime.batch_forms.is_per_node_only(hooks["predicate"])) == (remember, remember)


def test_a_block_with_an_effect_under_a_condition_on_the_task_hands_only_those_calls_to_the_per_node_code():
    """A top-level `if` reading the task but no node, whose block changes state, is tested when the
    form is called: where it holds the form raises PerNodeOnly before anything ran (and the guard
    holds, so no row memo answers), elsewhere it answers without the block."""
    from types import SimpleNamespace

    import pytest

    from fumarole.runtime.framework.batch_forms import BatchForms, PerNodeOnly
    from fumarole.runtime.framework.namespace import namespace

    source = _SWITCHED.replace("    if remember:", '    if remember and task.name == "noted":')
    compiled = compile_checked(checked(source))
    assert compiled.batch_fallbacks == []
    scope = namespace()
    exec(compiled.code, scope)
    runtime = SimpleNamespace(batch_forms=BatchForms(checked=True))
    hooks = scope["__build__"](runtime, SimpleNamespace(), {"remember": True})
    form = runtime.batch_forms.of(hooks["predicate"])
    batch = _columns(2).all_batch()
    noted, other = SimpleNamespace(name="noted"), SimpleNamespace(name="other")
    with pytest.raises(PerNodeOnly):
        form.run(noted, batch)
    assert form.run(other, batch).tolist() == [False, False]
    assert (form.guard(noted, None), form.guard(other, None)) == (True, False)


_NOTING_SOME = """plugin noting_some
arg threshold: float = 5000.0
state asked: map[string, int]

def note(node: Node) -> void:
    asked[node.name] = 1

on predicate(task, node):
    fail "full" when node.idle.cpu < 1.0
    note(node) when node.idle.cpu > threshold
"""


def test_a_call_made_for_its_effect_under_a_condition_on_the_node_hands_over_only_calls_reaching_it():
    """An effect some lanes may skip keeps the batch form: it answers where no lane reaches the call,
    and raises PerNodeOnly, before anything changed, where some lane does."""
    from types import SimpleNamespace

    import pytest

    from fumarole.policy_lang.compiled import STATE_VIEW
    from fumarole.runtime.framework.batch_forms import BatchForms, PerNodeOnly
    from fumarole.runtime.framework.namespace import namespace

    compiled = compile_checked(checked(_NOTING_SOME))
    assert compiled.batch_fallbacks == []
    batch = _columns(2).all_batch()  # 1,000 idle CPUs each
    for threshold, reached in ((5000.0, False), (500.0, True)):
        scope = namespace()
        exec(compiled.code, scope)
        runtime = SimpleNamespace(batch_forms=BatchForms(checked=True))
        hooks = scope["__build__"](runtime, SimpleNamespace(), {"threshold": threshold})
        form = runtime.batch_forms.of(hooks["predicate"])
        if reached:
            with pytest.raises(PerNodeOnly):
                form.run(SimpleNamespace(), batch)
        else:
            assert form.run(SimpleNamespace(), batch).tolist() == [False, False]
        assert hooks[STATE_VIEW]()["asked"] == {}  # nothing changed either way


_NOTING = """plugin noting
state asked: map[string, int]

def times_asked(node: Node) -> int:
    asked[node.name] = asked.get(node.name, 0) + 1
    return asked[node.name]

on predicate(task, node):
    fail "asked before" when times_asked(node) > 1
"""


def test_a_definition_with_an_effect_is_never_run_lane_by_lane():
    """A node rule calling a definition that changes state has no batch form (asked node by node
    only): lane by lane, the definition would change the state for every node of a batch."""
    compiled = compile_checked(checked(_NOTING))
    assert [(f.rule, f.reason) for f in compiled.batch_fallbacks] == [("predicate", "'times_asked' has an effect")]


def test_a_call_made_for_its_effect_makes_its_hook_node_by_node_only():
    """A statement that is a call (a void definition changing state) runs for its effect: the hook
    is never asked over a batch (the plugin's builder marks it node-by-node only)."""
    from types import SimpleNamespace

    from fumarole.runtime.framework.batch_forms import BatchForms
    from fumarole.runtime.framework.namespace import namespace

    source = _NOTING.replace("-> int:", "-> void:").replace("    return asked[node.name]\n", "").replace(
        '    fail "asked before" when times_asked(node) > 1\n', "    times_asked(node)\n")
    compiled = compile_checked(checked(source))
    scope = namespace()
    exec(compiled.code, scope)
    runtime = SimpleNamespace(batch_forms=BatchForms(checked=True))
    hooks = scope["__build__"](runtime, SimpleNamespace(), {})
    assert runtime.batch_forms.is_per_node_only(hooks["predicate"])
