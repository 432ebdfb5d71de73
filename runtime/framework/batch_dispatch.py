"""Batch forms of the hook combinators the fast engine runs node-level hooks through.

Each mirrors its per-node combinator in ``dispatch.py`` over a batch of nodes:
a plugin whose hook has a batch form (``policy_lang/vectorize.py``) answers
for every lane at once; one without answers lane by lane through its per-node
function, so the combination is the same either way.
"""

from __future__ import annotations

from typing import Callable, cast

import numpy as np

from fumarole.runtime.framework.batch_forms import BatchForm, RowLocalBatchForm
from fumarole.runtime.framework.node_columns import NodeBatch, NodeMap
from fumarole.runtime.framework.vector_lib import row_memo


def _lanes(args: tuple) -> tuple[int, NodeBatch]:
    for i, value in enumerate(args):
        if isinstance(value, NodeBatch):
            return i, value
    raise TypeError("a batch hook needs a node batch argument")


def _with_node(args: tuple, at: int, node) -> tuple:
    return args[:at] + (node,) + args[at + 1:]


def first_failure(fns: list[Callable]) -> Callable:
    """Lanes where some plugin fails (plugins are side-effect free, so every one may be asked).
    A plugin hook with a guard (vectorize: row-local while the guard is false) answers from a
    row memo per pod spec while its guard is false for the task."""
    def fails(*args) -> np.ndarray:
        at, dom = _lanes(args)
        out = np.zeros(len(dom), dtype=bool)
        for fn in fns:
            batch = getattr(fn, "batch", None)
            guard = getattr(batch, "guard", None)
            if guard is not None and not guard(*_with_node(args, at, None)):  # a guard: a batch form
                out |= row_memo(dom, cast(BatchForm, batch), lambda *a, fn=fn: fn(*a) is not None, at, args, True)
                continue
            if batch is not None:
                out |= np.asarray(batch(*args), dtype=bool)
                continue
            for lane in np.flatnonzero(~out).tolist():
                out[lane] = fn(*_with_node(args, at, dom.node(lane))) is not None
        return out

    def row_local(*args) -> bool:
        """Whether every plugin answers from its node's own facts for these arguments (the node's
        position holds None): each has a guard, and the guard is false."""
        for fn in fns:
            guard = getattr(getattr(fn, "batch", None), "guard", None)
            if guard is None or guard(*args):
                return False
        return True
    form = cast(RowLocalBatchForm, fails)  # a function, with the attribute hung on it here
    form.row_local = row_local
    return form


def sum_(fns: list[Callable]) -> Callable:
    """Per-lane sum of scores; a plugin answering none for a lane makes that lane's score 0."""
    def scores(*args) -> np.ndarray:
        at, dom = _lanes(args)
        total = np.zeros(len(dom))
        failed = None
        for fn in fns:
            batch = getattr(fn, "batch", None)
            if batch is not None:
                total = total + batch(*args)
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
    return scores


def sum_by_key(fns: list[Callable]) -> Callable:
    """Per-node sum of the plugins' maps over the batch; none when a plugin answers none."""
    def scores(*args) -> NodeMap | None:
        _at, dom = _lanes(args)
        total = np.zeros(len(dom))
        for fn in fns:
            batch = getattr(fn, "batch", None)
            part = batch(*args) if batch is not None else fn(*args)
            if part is None:
                return None
            if isinstance(part, NodeMap):
                total = total + part.over(dom, 0.0)
            else:
                total = total + np.array([part.get(n, 0.0) for n in dom.nodes], dtype=float)
        return NodeMap(dom, total)
    return scores


BATCH_COMBINATORS: dict[str, Callable[[list[Callable]], Callable]] = {
    "first-failure": first_failure,
    "sum": sum_,
    "sum-by-key": sum_by_key,
}
