"""Batch forms of the hook combinators the fast engine runs node-level hooks through.

Each mirrors its per-node combinator in ``dispatch.py`` over a batch of nodes:
a plugin whose hook has a batch form (``policy_lang/vectorize.py``) answers
for every lane at once; one without answers lane by lane through its per-node
function, so the combination is the same either way.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from fumarole.runtime.framework.batch_forms import BatchForm, BatchForms, PerNodeOnly, disagreement
from fumarole.runtime.framework.node_columns import NodeBatch, NodeColumns, NodeMap, as_batch, as_value
from fumarole.runtime.framework.policy_error import NOT_RETRIED, POLICY_FAILURES
from fumarole.runtime.framework.vector_lib import row_memo


def _lanes(args: tuple) -> tuple[int, NodeBatch]:
    for i, value in enumerate(args):
        if isinstance(value, NodeBatch):
            return i, value
    raise TypeError("a batch hook needs a node batch argument")


def _with_node(args: tuple, at: int, node: Any) -> tuple:
    return args[:at] + (node,) + args[at + 1:]


def first_failure(fns: list[Callable], forms: BatchForms) -> BatchForm:
    """Lanes where some plugin fails.  As node by node, a plugin is asked only about the lanes
    every earlier one let through: a form that stops at an effect some lanes reach
    (``vector_lib.no_lane_reaches``) must meet exactly the nodes the per-node code would ask it
    about.  A plugin hook with a guard (vectorize: row-local while the guard is false) answers
    from a row memo per pod spec while its guard is false for the task."""
    plugins = [(fn, forms.of(fn)) for fn in fns]
    checked = forms.checked

    def fails(*args: Any) -> np.ndarray:
        at, dom = _lanes(args)
        out = np.zeros(len(dom), dtype=bool)
        for fn, form in plugins:
            asked = np.flatnonzero(~out)
            if not len(asked):
                break
            if form is None:
                for lane in asked.tolist():
                    out[lane] = fn(*_with_node(args, at, dom.node(lane))) is not None
                continue
            lanes = dom if len(asked) == len(dom) else dom.subset(asked)
            lane_args = _with_node(args, at, lanes)
            if form.guard is not None and not form.guard(*_with_node(args, at, None)):
                part = row_memo(lanes, form.run, lambda *a, fn=fn: fn(*a) is not None, at, lane_args, True)
            else:
                part = np.asarray(form.run(*lane_args), dtype=bool)
            if checked:
                _check_lanes(fn, lane_args, at, lanes, np.broadcast_to(part, (len(lanes),)),
                             lambda value: value is not None)
            out[asked] = part
        return out

    def row_local(*args: Any) -> bool:
        """Whether every plugin answers from its node's own facts for these arguments (the node's
        position holds None): each has a guard, and the guard is false."""
        for _fn, form in plugins:
            if form is None or form.guard is None or form.guard(*args):
                return False
        return True
    return BatchForm(fails, row_local=row_local)


def sum_(fns: list[Callable], forms: BatchForms) -> BatchForm:
    """Per-lane sum of scores; a plugin answering none for a lane makes that lane's score 0."""
    plugins = [(fn, forms.of(fn)) for fn in fns]
    checked = forms.checked

    def scores(*args: Any) -> np.ndarray:
        at, dom = _lanes(args)
        total = np.zeros(len(dom))
        failed = None
        for fn, form in plugins:
            if form is not None:
                part = form.run(*args)
                if checked:
                    _check_lanes(fn, args, at, dom, np.broadcast_to(part, (len(dom),)), lambda value: value)
                total = total + part
                continue
            part = np.zeros(len(dom))
            for lane in range(len(dom)):
                value = fn(*_with_node(args, at, dom.node(lane)))
                if value is None:
                    failed = np.zeros(len(dom), dtype=bool) if failed is None else failed
                    failed[lane] = True
                else:
                    part[lane] = value
            total = total + part
        return total if failed is None else np.where(failed, 0.0, total)
    return BatchForm(scores)


def sum_by_key(fns: list[Callable], forms: BatchForms) -> BatchForm:
    """Per-node sum of the plugins' maps over the batch; none when a plugin answers none."""
    plugins = [(fn, forms.of(fn)) for fn in fns]

    def scores(*args: Any) -> NodeMap | None:
        _at, dom = _lanes(args)
        total = np.zeros(len(dom))
        for fn, form in plugins:
            part = form.run(*args) if form is not None else fn(*args)
            if part is None:
                return None
            if len(part) == 0:  # adds nothing (most plugins answer {} for most pods)
                continue
            if isinstance(part, NodeMap):
                total = total + part.over(dom, 0.0)
            else:
                total = total + np.array([part.get(n, 0.0) for n in dom.nodes], dtype=float)
        return NodeMap(dom, total)
    return BatchForm(scores)


def _check_lanes(fn: Callable, args: tuple, at: int, dom: NodeBatch, lanes: np.ndarray,
                 answer: Callable[[Any], Any]) -> None:
    """Under engine checking: each lane's batch answer is the plugin's per-node answer."""
    for lane, value in enumerate(lanes.tolist()):
        node = dom.node(lane)
        expected = answer(fn(*_with_node(args, at, node)))
        if value != expected:
            raise disagreement(fn, f"node {node.name}", value, expected)


def batched_definition(per_node: Callable, batch: Callable, positions: tuple[int, ...], columns: NodeColumns,
                       checked: bool) -> Callable:
    """A definition over node lists as the fast engine runs it: its batch form, the ``list[Node]``
    arguments at ``positions`` as batches.  Where the form stops at a policy failure, the per-node
    code runs: it raises it again at its policy line, or the engines disagree (batch_forms.py)."""
    def run(*args: Any) -> Any:
        call = list(args)
        for i in positions:
            batch_arg = as_batch(columns, args[i])
            if batch_arg is None:  # e.g. dry-run copies: not session nodes
                return per_node(*args)
            call[i] = batch_arg
        try:
            value = as_value(batch(*call))
        except NOT_RETRIED:  # a spent budget: the per-node code would trip it at its own first step
            raise
        except PerNodeOnly:  # a hook with effects, raised before anything ran: the per-node code asks it
            return per_node(*args)
        except POLICY_FAILURES as failure:
            answer = per_node(*args)  # raises it at its policy line, where the engines agree
            if checked:
                raise disagreement(per_node, "the same nodes", f"{type(failure).__name__}: {failure}",
                                   answer) from failure
            return answer
        if checked:
            answer = per_node(*args)
            if value != answer:
                raise disagreement(per_node, "the same nodes", value, answer)
        return value
    return run


BATCH_COMBINATORS: dict[str, Callable[[list[Callable], BatchForms], BatchForm]] = {
    "first-failure": first_failure,
    "sum": sum_,
    "sum-by-key": sum_by_key,
}
