"""The types of the fast engine's batch forms, which reach the runtime hung on functions.

``policy_lang/vectorize.py`` emits, beside a hook or definition compiled node by node, the same
rule over a batch of nodes and hangs it on the per-node function as ``fn.batch``; the session
hangs one on each node-level dispatcher (``batch_dispatch.py``).  A batch form may carry a
``guard`` (a plugin hook: while the guard is false for the arguments, with None in the node's
place, the hook answers from the node's own facts) or a ``row_local`` test (a node check: the
same question for one task).  A plain function cannot declare attributes, so the runtime reads
them with ``getattr(fn, "batch", None)`` and annotates what it finds with these protocols; the
one place the runtime hangs an attribute itself casts the function to its protocol.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol


class BatchForm(Protocol):
    """A node-level rule over a batch: the per-node function's arguments, a NodeBatch (or the
    session's NodeList) where it takes a node, answering one value per lane."""

    def __call__(self, *args: Any) -> Any: ...


class GuardedBatchForm(BatchForm, Protocol):
    """A plugin hook's batch form with ``guard``: the hook is row-local while the guard is false."""

    guard: Callable[..., bool]


class RowLocalBatchForm(BatchForm, Protocol):
    """A node check's batch form with ``row_local``: whether, for these arguments (a task), the
    check answers from each node's own facts, so its answers may be kept per row."""

    row_local: Callable[..., bool]
