"""Stopping a check from another thread: an editor's newer edit supersedes the check of the older
text, and the language server stops it rather than let it run to the end on a core it needs.

The caller runs the check with :func:`run_cancellable` and an event; the checker calls
:func:`checkpoint` as it goes (every few hundred expressions, and between files), which raises
:class:`Cancelled` once the event is set.  ``Cancelled`` is a BaseException, like
``asyncio.CancelledError``, so no ``except Exception`` on the way can mistake it for a failed
check and keep a half-made result.
"""

from __future__ import annotations

import threading
from contextvars import ContextVar
from typing import Callable, TypeVar

_EVENT: ContextVar[threading.Event | None] = ContextVar("fumarole_cancel_event", default=None)
R = TypeVar("R")


class Cancelled(BaseException):
    """The check was superseded; nobody wants its result."""


def checkpoint() -> None:
    """Raise Cancelled if the check running in this context has been cancelled."""
    event = _EVENT.get()
    if event is not None and event.is_set():
        raise Cancelled


def run_cancellable(event: threading.Event, work: Callable[..., R], *args: object) -> R:
    """``work(*args)``, stopped with Cancelled at its next checkpoint once ``event`` is set."""
    token = _EVENT.set(event)
    try:
        return work(*args)
    finally:
        _EVENT.reset(token)
