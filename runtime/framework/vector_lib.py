"""``_V``: what batch forms (``policy_lang/vectorize.py``) run on.

Lane-wise operations over :class:`NodeBatch` columns, with Python's semantics
(float64 is a Python float; IEEE division as ``_div``), and the batch forms of
standard-library functions that node rules call.  A library function without
a batch form here, or one whose fast path does not apply to the task, runs
lane by lane through its per-node code: the answer is the same, only slower.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Callable, Iterable, cast

import numpy as np

from fumarole.runtime.api.model import Task
from fumarole.runtime.api.resource import EPS, Resource
from fumarole.runtime.framework.batch_forms import BatchForms, PerNodeOnly
from fumarole.runtime.framework.node_columns import NodeBatch, NodeMap, ResourceVector
from fumarole.runtime.framework.node_keys import count_keys, values_of_names
from fumarole.runtime.k8s import domain_counts
from fumarole.runtime.k8s import nodeaffinity, nodeports, noderesources, podspec, podtopologyspread, tainttoleration

# Lanes a rule does not take may divide by zero (a masked-out branch is computed too): IEEE
# results, as ``_div`` gives, without a warning per division.
np.seterr(divide="ignore", invalid="ignore")


def _size(dom: NodeBatch) -> int:
    return len(dom.rows)


def broadcast(x: Any, dom: NodeBatch) -> np.ndarray:
    if isinstance(x, np.ndarray) and x.shape == (_size(dom),):
        return x
    return np.full(_size(dom), x)


def none_failed(dom: NodeBatch) -> np.ndarray:
    return np.zeros(_size(dom), dtype=bool)


def both(a, b):
    """Lanes in both masks.  ``_live`` is None until a lane returns (every lane is live): a
    branch that retires lanes may not run, so ``both(mask, _live)`` meets None as every lane."""
    if b is None:
        return a
    return np.logical_and(a, b)


def either(a, b):
    return np.logical_or(a, b)


def negate(a):
    return np.logical_not(a)


def choose(mask, a, b):
    return np.where(mask, a, b)


def is_set(x):
    if isinstance(x, np.ndarray):
        if x.dtype == object:
            return x != None  # noqa: E711 - numpy compares element by element (values are none or not)
        return np.ones(len(x), dtype=bool)
    return x is not None


def present(x):
    """A column of optional numbers as arithmetic takes it where a mask narrowed it to its set
    lanes (``x != none and now - x <= d``): a none (left out by the mask, its answer never taken)
    becomes NaN; a number keeps its Python value."""
    if isinstance(x, np.ndarray) and x.dtype == object:
        missing = x == None  # noqa: E711 - element by element
        if missing.any():
            x = x.copy()
            x[missing] = math.nan
    return x


def fail(fails: np.ndarray, mask, cond, dom: NodeBatch) -> np.ndarray:
    lanes = cond if mask is None else np.logical_and(mask, cond)
    return np.logical_or(fails, lanes)


def retire(live, mask, dom: NodeBatch) -> np.ndarray:
    alive = np.ones(_size(dom), dtype=bool) if live is None else live
    return np.logical_and(alive, np.logical_not(mask))


def returned(res, live, mask, value, dom: NodeBatch):
    """Lanes of ``mask`` (still live) return ``value``; they are retired."""
    alive = np.ones(_size(dom), dtype=bool) if live is None else live
    lanes = np.logical_and(alive, mask)
    value = broadcast(value, dom)
    res = np.where(lanes, value, value if res is None else res)
    return res, np.logical_and(alive, np.logical_not(mask))


def finish(res, live, value, dom: NodeBatch):
    """The function's result: ``value`` for the lanes still live, earlier returns for the others."""
    if value is None:
        return res
    if res is None:
        if isinstance(value, (ResourceVector, NodeMap, NodeBatch)):
            return value
        return broadcast(value, dom)
    return np.where(live, broadcast(value, dom), res) if live is not None else broadcast(value, dom)


def divide(a, b):
    return np.true_divide(a, b)


def floor(x):
    return np.floor(x)


def float_(x):
    return np.asarray(x, dtype=float)


def int_(x):
    return np.trunc(np.asarray(x, dtype=float))


def min_(*xs):
    out = xs[0]
    for x in xs[1:]:
        out = np.where(np.asarray(x) < out, x, out)  # Python's min keeps the first of equals
    return out


def max_(*xs):
    out = xs[0]
    for x in xs[1:]:
        out = np.where(np.asarray(x) > out, x, out)
    return out


def member(inside: bool, item, container):
    """``item in container`` per lane; a lane the container was not worked out for (masked out:
    None, or no lane at all, ``per_lane``'s empty column) holds nothing, and its answer is not taken."""
    if isinstance(container, np.ndarray) and container.dtype != object:
        found = np.zeros(len(container), dtype=bool)
    else:
        found = np.fromiter((c is not None and i in c for i, c in _pairs(item, container)), dtype=bool)
    return found if inside else np.logical_not(found)


def _pairs(a, b):
    n = len(a) if isinstance(a, np.ndarray) else len(b)
    left = a.tolist() if isinstance(a, np.ndarray) else [a] * n
    right = b.tolist() if isinstance(b, np.ndarray) else [b] * n
    return zip(left, right)


def count(names) -> np.ndarray:
    """``len`` of a list per lane; a lane the list was not worked out for (masked out: None, or
    no lane at all, ``per_lane``'s empty column) counts 0, and its answer is not taken."""
    if isinstance(names, MissingNames):
        return names.counts
    if names.dtype != object:
        return np.zeros(len(names))
    return np.fromiter((0 if x is None else len(x) for x in names.tolist()), dtype=float)


# -- resources ---------------------------------------------------------------------------------------

def _vector(res, n: int) -> ResourceVector:
    """A Resource as the same value in every lane (plain numbers: numpy broadcasts them)."""
    if isinstance(res, ResourceVector):
        return res
    scalars = res.scalars or {}
    # Plain values stand where columns would: numpy broadcasts them against every lane.
    has = cast(dict[str, np.ndarray], {k: True for k in scalars})
    return ResourceVector(res.milli_cpu, res.memory, dict(scalars), has, cast(np.ndarray, res.scalars is None))


def _lanes_of(*values) -> int:
    for v in values:
        if isinstance(v, ResourceVector):
            return len(v)
    raise TypeError("no resource vector among the operands")


def _le(a, b):
    return np.logical_or(a < b, np.abs(a - b) < EPS)


def _every_dimension(l: ResourceVector, r: ResourceVector, ok) -> np.ndarray:
    """resource.less_equal / less in ZERO mode: cpu, memory and every scalar ``l`` sets."""
    result = np.logical_and(ok(l.cpu, r.cpu), ok(l.memory, r.memory))
    for name, values in l.scalars.items():
        result = np.logical_and(result, np.logical_or(np.logical_not(l.has[name]), ok(values, r.get(name))))
    return result


def resources(op: str, left, right):
    n = _lanes_of(left, right)
    l, r = _vector(left, n), _vector(right, n)
    if op == "<=":
        return _every_dimension(l, r, _le)
    if op == "<":
        return _every_dimension(l, r, lambda a, b: a < b)
    if op == "+":
        return _added(l, r)
    return _subtracted(l, r)


def _added(l: ResourceVector, r: ResourceVector) -> ResourceVector:
    """l.clone().add(r): r's scalars join l's map (created when r has any)."""
    r_any = _any_scalar(r)
    scalars, has = dict(l.scalars), dict(l.has)
    for name, values in r.scalars.items():
        base = scalars.get(name, 0.0)
        scalars[name] = np.where(r.has[name], base + values, base)
        has[name] = np.logical_or(has.get(name, False), r.has[name])
    return ResourceVector(l.cpu + r.cpu, l.memory + r.memory, scalars, has,
                          np.logical_and(l.none, np.logical_not(r_any)))


def _subtracted(l: ResourceVector, r: ResourceVector) -> ResourceVector:
    """l.clone().sub(r): scalars only where l has a scalar map."""
    scalars, has = dict(l.scalars), dict(l.has)
    for name, values in r.scalars.items():
        lanes = np.logical_and(r.has[name], np.logical_not(l.none))
        base = scalars.get(name, 0.0)
        scalars[name] = np.where(lanes, base - values, base)
        has[name] = np.logical_or(has.get(name, False), lanes)
    return ResourceVector(l.cpu - r.cpu, l.memory - r.memory, scalars, has, l.none)


def _any_scalar(r: ResourceVector):
    out = False
    for has in r.has.values():
        out = np.logical_or(out, has)
    return out


def resource_get(res, name: str):
    return res.get(name)


class MissingNames:
    """``insufficient(l, r)`` over lanes: only how many dimensions fall short is needed lane-wise."""

    __slots__ = ("counts",)

    def __init__(self, counts: np.ndarray) -> None:
        self.counts = counts


def _insufficient(mask, l, r) -> MissingNames:
    n = _lanes_of(l, r)
    lv, rv = _vector(l, n), _vector(r, n)
    short = np.logical_not(_le(lv.cpu, rv.cpu)).astype(float) + np.logical_not(_le(lv.memory, rv.memory))
    for name, values in lv.scalars.items():
        short = short + np.logical_and(lv.has[name], np.logical_not(_le(values, rv.get(name))))
    return MissingNames(np.broadcast_to(short, (n,)))


# -- node lists and per-node maps ---------------------------------------------------------------------

def node_attr(dom: NodeBatch, name: str, lane_by_lane: Callable[[], Any]):
    value = dom.attribute(name)
    return lane_by_lane() if value is None else value


def subset(dom: NodeBatch, mask) -> NodeBatch:
    return dom.subset(np.asarray(broadcast(mask, dom), dtype=bool))


def node_map(dom: NodeBatch, values) -> NodeMap:
    return NodeMap(dom, np.asarray(broadcast(values, dom), dtype=float))  # a map never changes its column in place


def per_node_map(fn: Callable, positions: tuple[int, ...], args: tuple) -> NodeMap:
    """A definition over node lists with no batch form, run once by its per-node code over the
    batches' nodes: the numbers it maps them to, a column over the first batch.  A node it leaves
    out is a missing key (KeyError, a policy failure: the per-node code then runs the rule)."""
    dom = args[positions[0]]
    result = fn(*[(a.nodes if i in positions else a) for i, a in enumerate(args)])
    return NodeMap(dom, np.array([result[n] for n in dom.nodes], dtype=float))


def map_lanes(mapping: NodeMap, dom: NodeBatch, default):
    return mapping.over(dom, default)


def map_store(mapping: NodeMap, dom: NodeBatch, mask, values) -> None:
    if dom is not mapping.batch and not np.array_equal(dom.rows, mapping.batch.rows):
        raise KeyError("a per-node map changed over another node list")
    new = np.asarray(broadcast(values, dom), dtype=float)
    mapping.column = new if mask is None else np.where(mask, new, mapping.column)


def map_max(mapping: NodeMap):
    """``max(m.values())`` of a per-node map, as Python's max over the values gives it: the first
    largest (argmax's pick).  argmax stops at a NaN, which Python's max treats by where it stands:
    then Python's max decides."""
    return _map_extreme(mapping, np.ndarray.argmax, max)


def map_min(mapping: NodeMap):
    """``min(m.values())`` of a per-node map (see :func:`map_max`)."""
    return _map_extreme(mapping, np.ndarray.argmin, min)


def _map_extreme(mapping: NodeMap, pick: Callable, builtin: Callable):
    column = mapping.column if isinstance(mapping, NodeMap) else None
    if column is None or len(column) == 0:
        return builtin(mapping.values())
    value = column[pick(column)]
    return value.item() if value == value else builtin(column.tolist())


def dict_lanes(mapping: dict | NodeMap, dom: NodeBatch, default) -> np.ndarray:
    if isinstance(mapping, NodeMap):
        return mapping.over(dom, default)
    return np.array([mapping.get(n, default) for n in dom.nodes], dtype=float)


def no_lane_reaches(lanes: np.ndarray) -> None:
    """A call made for its effect, which the lanes of ``lanes`` reach: the batch form stops before
    anything changed, and its caller asks the per-node code, which makes the call node by node."""
    if np.any(lanes):
        raise PerNodeOnly("a lane reaches a call made for its effect")


def per_node_when(run: Callable, holds: Callable) -> Callable:
    """A hook's batch form that stands for the hook only in a call where ``holds`` (its switches,
    vectorize's ``_hook_switched``) is false: where it holds, PerNodeOnly, before anything ran,
    sends the caller back to the per-node code, which runs the switched block node by node."""
    def form(*args):
        if holds(*args):
            raise PerNodeOnly("a switch of the hook holds for this call")
        return run(*args)
    return form


def dispatch(forms: BatchForms, dispatcher, positions: tuple[int, ...], args: tuple, lanes=None):
    """A hook dispatcher over a batch: its batch form, else plugin by plugin per node.  A hook with
    effects (an extender call) must be asked exactly as the per-node code asks it: PerNodeOnly,
    before anything ran, sends the caller back to its per-node code.  ``lanes``: a failure hook
    asked about one node under a condition on it is asked about the lanes reaching the call only
    (the others answer no failure; the caller reads none of them), as the per-node code asks."""
    if forms.is_per_node_only(dispatcher):
        raise PerNodeOnly("a plugin's hook has effects")
    form = forms.of(dispatcher)
    if form is not None and lanes is not None:
        at = positions[0]
        dom = args[at]
        asked = np.flatnonzero(np.broadcast_to(np.asarray(lanes, dtype=bool), (len(dom),)))
        if len(asked) < len(dom):
            out = np.zeros(len(dom), dtype=bool)
            if len(asked):
                sub = dom.subset(asked)
                out[asked] = np.asarray(form.run(*(args[:at] + (sub,) + args[at + 1:])), dtype=bool)
            return out
    if form is not None:
        return form.run(*args)
    dom = args[positions[0]]
    result = dispatcher(*[(dom.nodes if i in positions else a) for i, a in enumerate(args)])
    return NodeMap(dom, np.array([result.get(n, 0.0) for n in dom.nodes], dtype=float)) \
        if isinstance(result, dict) else result


# -- row memos ------------------------------------------------------------------------------------------

def memo_key(value) -> object:
    """A plain argument of a row-local definition as part of a memo key; None when it has none.
    A task stands for what row-local code may read of it: its requests
    (vectorize.ROW_TASK_ATTRIBUTES) and its pod spec (vectorize.ROW_LOCAL_LIBRARY)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return (type(value).__name__, value)
    if isinstance(value, Resource):
        return _resource_key(value)
    if isinstance(value, Task):
        key = value.derived.get(_TASK_KEY)
        if key is None:  # the spec covers what is derived from it alone (the non-zero request)
            key = ("task", _resource_key(value.request), _resource_key(value.init_request),
                   podspec.spec_identity(value))
            if len(_TASK_KEYS) >= _TASK_KEYS_KEPT:
                _TASK_KEYS.clear()
            key = value.derived[_TASK_KEY] = _TASK_KEYS.setdefault(key, key)  # equal keys: one object
        return key
    return None


_TASK_KEY = ("vector_lib.memo_key",)  # where a task keeps its memo key (its requests do not change)
_TASK_KEYS: dict[tuple, tuple] = {}  # the task keys seen, so that tasks of one spec share one key object
_TASK_KEYS_KEPT = 4096


def _resource_key(res: Resource) -> tuple:
    return (res.milli_cpu, res.memory, None if res.scalars is None else tuple(sorted(res.scalars.items())))


def row_memo(dom: NodeBatch, batch_fn: Callable, node_fn: Callable, at: int, args: tuple, boolean: bool):
    """A call of a row-local definition (its node argument at ``at``; its batch form and per-node
    function) over the lanes of ``dom``: gathered from a memo over every row of the session, per
    batch form and argument key."""
    parts = [memo_key(a) for i, a in enumerate(args) if i != at]
    if None in parts:
        return batch_fn(*args)
    before, after = args[:at], args[at + 1:]
    return dom.columns.memo_over(dom, (batch_fn, *parts), lambda rows: batch_fn(*before, rows, *after),
                                 lambda node: node_fn(*before, node, *after), bool if boolean else float)


# -- lane by lane --------------------------------------------------------------------------------------

def _lane_value(value, lane: int):
    if isinstance(value, NodeBatch):
        return value.node(lane)
    if isinstance(value, ResourceVector):
        return value.item(lane)
    if isinstance(value, np.ndarray):
        return value[lane].item() if value.dtype != object else value[lane]
    return value


def _lane_values(value, lanes: "range | list[int]") -> "list | Iterable":
    """What :func:`_lane_value` gives for each of ``lanes``, gathered in one pass over ``value``
    (a row memo works out thousands of lanes: per-lane type tests cost more than the rule)."""
    if isinstance(value, NodeBatch):
        nodes = value.nodes
        return nodes if isinstance(lanes, range) and len(nodes) == len(lanes) else [nodes[lane] for lane in lanes]
    if isinstance(value, np.ndarray) and value.ndim == 1:
        items = value.tolist() if value.dtype != object else list(value)  # Python scalars, as .item() gives
        return items if isinstance(lanes, range) and len(items) == len(lanes) else [items[lane] for lane in lanes]
    if isinstance(value, (ResourceVector, np.ndarray)):
        return [_lane_value(value, lane) for lane in lanes]
    return itertools.repeat(value, len(lanes))


def per_lane(fn: Callable, dom: NodeBatch, mask, kind: str, *values):
    """Run the per-node code of an expression for each lane (``mask``: only those lanes)."""
    n = _size(dom)
    lanes = range(n) if mask is None else np.flatnonzero(broadcast(mask, dom)).tolist()
    if values:
        results = dict(zip(lanes, map(fn, *[_lane_values(v, lanes) for v in values])))
    else:
        results = {lane: fn() for lane in lanes}
    return _collect(results, n, kind)


def at_names(mapping: dict, dom: NodeBatch, mask, kind: str):
    """``mapping[node.name]`` per lane (``mask``: only those lanes), as :func:`per_lane` runs it:
    plugin state kept per node (deviceshare's tallies, numa-aware's policies) read by a rule."""
    names = dom.columns.node_names[dom.rows].tolist()
    lanes = range(len(names)) if mask is None else np.flatnonzero(broadcast(mask, dom)).tolist()
    return _collect({lane: mapping[names[lane]] for lane in lanes}, len(names), kind)


def get_at_names(mapping: dict, dom: NodeBatch, mask, kind: str, default: Any = None):
    """``mapping.get(node.name, default)`` per lane (see :func:`at_names`)."""
    names = dom.columns.node_names[dom.rows].tolist()
    lanes = range(len(names)) if mask is None else np.flatnonzero(broadcast(mask, dom)).tolist()
    get = mapping.get
    return _collect({lane: get(names[lane], default) for lane in lanes}, len(names), kind)


def _collect(results: dict[int, Any], n: int, kind: str):
    if kind == "E":
        out = np.zeros(n, dtype=bool)
        out[[lane for lane, value in results.items() if value is not None]] = True
        return out
    if kind == "R":
        return _stack([results.get(i) or Resource() for i in range(n)])
    values = list(results.values())
    types = set(map(type, values))
    if types <= {bool} or (not types <= {int, float} and all(isinstance(v, bool) for v in values)):
        out = np.zeros(n, dtype=bool)
    elif types <= {int, float} or all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        out = np.zeros(n)
    else:
        out = np.full(n, None, dtype=object)
        for lane, value in results.items():
            out[lane] = value
        return out
    out[list(results)] = values
    return out


def _stack(items: list[Resource]) -> ResourceVector:
    n = len(items)
    names = {name for r in items for name in (r.scalars or {})}
    return ResourceVector(np.array([r.milli_cpu for r in items]), np.array([r.memory for r in items]),
                          {name: np.array([(r.scalars or {}).get(name, 0.0) for r in items]) for name in names},
                          {name: np.array([name in (r.scalars or {}) for r in items]) for name in names},
                          np.array([r.scalars is None for r in items], dtype=bool) if n else np.zeros(0, bool))


def library(key: str, lane_by_lane: Callable[[], Any], mask, *values):
    """A standard-library call over lanes: its batch form when it has one that applies."""
    batched = LIBRARY.get(key)
    if batched is not None:
        result = batched(mask, *values)
        if result is not NotImplemented:
            return result
    return lane_by_lane()


# -- batch forms of the standard library ------------------------------------------------------------------

def _static(dom: NodeBatch, name: str, fact: Callable) -> np.ndarray:
    """A static node fact as a column (computed once per session)."""
    cols = dom.columns
    column = cols.static.get(name)
    if column is None:
        column = cols.static[name] = np.array([bool(fact(n)) for n in cols.nodes], dtype=bool)
    return column[dom.rows]


def _tainted(dom: NodeBatch) -> np.ndarray:
    return _static(dom, "tainted", lambda n: n.taints)


def _some_lanes(fn: Callable, dom: NodeBatch, lanes: np.ndarray, default, dtype) -> np.ndarray:
    out = np.full(_size(dom), default, dtype=dtype)
    for lane in np.flatnonzero(lanes).tolist():
        out[lane] = fn(dom.node(lane))
    return out


def _untolerated_taint(mask, task, dom, effects):
    """Taints and tolerations are static: one column per distinct tolerations and effects."""
    cols = dom.columns
    key = ("untolerated", tainttoleration.tolerations_text(task), tuple(effects))
    column = cols.static.get(key)
    if column is None:
        every = cols.all_batch()
        column = cols.static[key] = _some_lanes(lambda n: tainttoleration.untolerated_taint(task, n, effects),
                                                every, _tainted(every), None, object)
    return column[dom.rows]


def _prefer_no_schedule(mask, task, dom):
    cols = dom.columns
    key = ("prefer-no-schedule", tainttoleration.tolerations_text(task))
    column = cols.static.get(key)
    if column is None:
        every = cols.all_batch()
        column = cols.static[key] = _some_lanes(lambda n: tainttoleration.intolerable_prefer_no_schedule(task, n),
                                                every, _tainted(every), 0.0, float)
    return column[dom.rows]


def _host_port_conflict(mask, task, dom):
    if not nodeports.wanted_host_ports(task):
        return np.zeros(_size(dom), dtype=bool)
    return NotImplemented


def _node_selector(mask, task, dom):
    """Node selector and required node affinity: static node facts, one mask per distinct pod spec."""
    key = ("selector", nodeaffinity.node_selection_text(task))
    cols = dom.columns
    column = cols.static.get(key)
    if column is None:
        column = cols.static[key] = np.array([nodeaffinity.matches_node_selector_and_affinity(task, n)
                                              for n in cols.nodes], dtype=bool)
    return column[dom.rows]


def _balanced(mask, task, dom):
    """NodeResourcesBalancedAllocation, lane-wise with the per-node function's float steps."""
    pod = task.request
    n = _size(dom)
    if all(pod.get(name) == 0 for name in noderesources.BALANCED_RESOURCES):
        return np.zeros(n)
    before = dom.attribute("view_requested")
    allocatable = dom.attribute("allocatable")
    after = _added(before, _vector(pod, n))
    with_pod = _balance(after, allocatable, pod, n)
    without_pod = _balance(before, allocatable, pod, n)
    half = podspec.MAX_NODE_SCORE // 2
    return half + np.floor_divide(half + with_pod - without_pod, 2)


def _balance(requested: ResourceVector, allocatable: ResourceVector, pod: Resource, n: int) -> np.ndarray:
    names = [name for name in noderesources.BALANCED_RESOURCES if name in ("cpu", "memory") or pod.get(name) != 0]
    fractions, present = [], []
    for name in names:
        capacity = np.broadcast_to(allocatable.get(name), (n,))  # 0.0 when no node has the resource
        fractions.append(np.minimum(np.true_divide(requested.get(name), capacity), 1.0))
        present.append(capacity != 0)
    if len(names) == 2:  # cpu and memory: half the difference where the node has both
        both_there = np.logical_and(present[0], present[1])
        spread = np.where(both_there, np.abs(fractions[0] - fractions[1]) / 2, 0.0)
        return np.trunc((1 - spread) * podspec.MAX_NODE_SCORE)
    counts = np.sum(present, axis=0) if present else np.zeros(n)
    spread = np.zeros(n)
    if len(names) >= 2:
        two = counts == 2
        if two.any():
            picked = _first_two(fractions, present, n)
            spread = np.where(two, np.abs(picked[0] - picked[1]) / 2, spread)
        if (counts > 2).any():
            raise _LaneByLane()
    return np.trunc((1 - spread) * podspec.MAX_NODE_SCORE)


class _LaneByLane(Exception):
    """A batch form's fast path does not cover these lanes."""


def _first_two(fractions, present, n):
    first, second = np.zeros(n), np.zeros(n)
    seen = np.zeros(n, dtype=int)
    for values, here in zip(fractions, present):
        first = np.where(here & (seen == 0), values, first)
        second = np.where(here & (seen == 1), values, second)
        seen = seen + here
    return first, second


def _balanced_or_lanes(mask, task, dom):
    """Row-local (the node's requests and allocatable, the pod's requests): one memo per distinct
    pod request, kept current row by row (NodeColumns.memo)."""
    pod = task.request
    key = ("balanced", pod.milli_cpu, pod.memory, tuple(sorted((pod.scalars or {}).items())))
    def rows(batch: NodeBatch) -> np.ndarray:
        try:
            return _balanced(None, task, batch)
        except _LaneByLane:
            return np.array([noderesources.balanced_allocation_score(task, n) for n in batch.nodes], dtype=float)
    return dom.columns.memo_over(dom, key, rows, lambda node: noderesources.balanced_allocation_score(task, node))


def _image_locality(mask, task, dom):
    if not dom.columns.k8s.any_node_has_images_of(task):
        return np.zeros(_size(dom))
    return NotImplemented


def _failing(rows: domain_counts.Rows, task, dom, view) -> np.ndarray | None:
    """The lanes a filter over every row (domain_counts) refuses; None without counts."""
    reasons = domain_counts.answer(dom.columns.k8s.counts, rows, task, view)
    return None if reasons is None else reasons[dom.rows] != None  # noqa: E711 - element-wise


def _pod_affinity(mask, task, dom, view=None):
    """InterPodAffinity from the counts per domain; a copied view: its own shortcut, else node by node."""
    failing = _failing(domain_counts.affinity_reasons, task, dom, view)
    if failing is not None:
        return failing
    if dom.columns.k8s.affinity_cannot_refuse(task, None if view is None else view.placed):
        return np.zeros(_size(dom), dtype=bool)
    return NotImplemented


def _pod_view_affinity(mask, view, task, dom):
    return _pod_affinity(mask, task, dom, view)


def _spread(mask, task, dom, view=None):
    if not podtopologyspread.has_hard_spread_constraints(task):
        return np.zeros(_size(dom), dtype=bool)
    failing = _failing(domain_counts.spread_reasons, task, dom, view)
    return NotImplemented if failing is None else failing


def _spread_view(mask, view, task, dom):
    return _spread(mask, task, dom, view)


def _inter_pod_affinity_scores(mask, task, candidates):
    """InterPodAffinity's scores of the candidates from the counts per domain (None: skipped)."""
    counts = getattr(getattr(candidates, "columns", None), "k8s", None)
    counts = None if counts is None else counts.counts
    if counts is None:
        return NotImplemented
    raw = domain_counts.inter_pod_affinity_raw(counts, task)
    if raw is None:
        return None
    return NodeMap(candidates, domain_counts.normalised_affinity(raw[candidates.rows]))


def _topology_spread_scores(mask, task, candidates):
    """PodTopologySpread's scores of the candidates from the counts per domain (None: skipped)."""
    counts = getattr(getattr(candidates, "columns", None), "k8s", None)
    counts = None if counts is None else counts.counts
    if counts is None:
        return NotImplemented
    scores = domain_counts.spread_scores(counts, task, candidates.rows)
    return None if scores is None else NodeMap(candidates, scores)


def _select_best(mask, scores):
    """The first node with the highest score (NaN scores: lane by lane, as Python compares them)."""
    if not isinstance(scores, NodeMap) or len(scores.column) == 0:
        return NotImplemented
    best = int(scores.column.argmax())  # the first NaN if there is one
    if scores.column[best] != scores.column[best]:
        return NotImplemented
    return scores.batch.node(best)


def _names(nodes) -> list[str] | None:
    """The names of a batch's nodes, from the names column (None: not a batch)."""
    return nodes.columns.node_names[nodes.rows].tolist() if isinstance(nodes, NodeBatch) else None


def _nodes_per_key(mask, nodes, keys):
    names = _names(nodes)
    return NotImplemented if names is None else count_keys(names, keys)


def _values_by_key(mask, nodes, keys, values, default):
    """values_by_key as a per-node map: one column over the batch."""
    names = _names(nodes)
    if names is None:
        return NotImplemented
    return NodeMap(nodes, np.array(values_of_names(names, keys, values, default), dtype=float))


LIBRARY: dict[str, Callable] = {
    "_sched.select_best(_rt, {0})": _select_best,
    "_res.insufficient": _insufficient,
    "_k8s.untolerated_taint": _untolerated_taint,
    "_k8s.intolerable_prefer_no_schedule": _prefer_no_schedule,
    "_k8s.host_port_conflict": _host_port_conflict,
    "_k8s.matches_node_selector_and_affinity": _node_selector,
    "_k8s.balanced_allocation_score": _balanced_or_lanes,
    "_rt.k8s.image_locality_score": _image_locality,
    "_view.pod_affinity_failure(_rt, {0}, {1})": _pod_affinity,
    "PodView.pod_affinity_failure": _pod_view_affinity,
    "_view.topology_spread_failure(_rt, {0}, {1})": _spread,
    "PodView.topology_spread_failure": _spread_view,
    "_rt.k8s.inter_pod_affinity_scores": _inter_pod_affinity_scores,
    "_rt.k8s.topology_spread_scores": _topology_spread_scores,
    "_sched.nodes_per_key": _nodes_per_key,
    "_sched.values_by_key": _values_by_key,
}
