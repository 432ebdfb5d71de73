"""A session's life, as Volcano's scheduler lives it: open, the actions, close.

Volcano has one owner for this (``pkg/scheduler/framework/framework.go``:
``OpenSession`` / ``CloseSession``, driven by ``scheduler.go``'s ``runOnce``), and
so does fumarole: every command that decides (``run``, ``diff``, ``test``, the
what-if replay, ``serve`` and its extender) makes its session with
:func:`new_session` and goes through these functions, so they all open the
same clusters with the same warnings.

What fumarole adds to Volcano's sequence is one note between opening and the
actions: a configuration problem the plugins found while opening (a queue
hierarchy with a missing parent or a cycle, ``Session.problems``) becomes a
warning at its place in the cluster file (``Session.warnings``, which ``run``
and ``diff`` print).  It refuses nothing: the session then decides what
Volcano's would, which logs the problem (or nothing) and schedules on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from fumarole.runtime.framework.budget import StepBudget
from fumarole.runtime.framework.policy_error import PolicyRuntimeError
from fumarole.runtime.framework.process_state import ProcessState
from fumarole.runtime.framework.session import CompiledBundle, Decisions, Session
from fumarole.runtime.ingest.kube import Cluster
from fumarole.runtime.ingest.scheduler_options import SchedulerOptions

Label = Callable[[str], str]  # how a policy file's name is shown (an archive's as ``ARCHIVE!/path``)


def new_session(bundle: CompiledBundle, cluster: Cluster, *, now: float | None = None,
                options: SchedulerOptions | None = None, process_state: ProcessState | None = None,
                engine: str = "fast", budget: StepBudget | None = None) -> Session:
    """NewSession: the snapshot of ``cluster`` the session decides on, under ``bundle``.

    The one place a session is made (tests/test_layout.py holds every other module to it), so
    that a command cannot make one and then run it some other way than :func:`run_session` or
    :func:`open_session` ... :func:`close_session`.  ``options`` default to the bundle's,
    ``process_state`` to a freshly started scheduler's, ``budget`` to the defaults of a run.
    """
    return Session(bundle, cluster, now=now, options=options, process_state=process_state, engine=engine,
                   budget=budget)


def open_session(session: Session, source: str | None, sources: Mapping[str, str] | None = None) -> None:
    """OpenSession: the plugins registered and opened; a problem they found becomes a warning.

    ``source`` names where the session's objects came from (a cluster file, ``request``),
    the file its problems are placed in; ``sources`` holds the files' texts.  ``None`` is a
    session over partial objects (an extender verb's own), whose queue hierarchy is nobody's
    configuration: it has no warnings.
    """
    session.open()
    if source is not None:
        text = dict(sources or {}).get(source)
        session.warnings = [p.diagnostic(source, text) for p in session.problems]


def close_session(session: Session) -> Decisions:
    """CloseSession: the job status update, the plugins' close hooks, the process state saved."""
    return session.close()


@contextmanager
def policy_files_as(label: Label) -> Iterator[None]:
    """A policy failure raised inside names its policy file as ``label`` shows it."""
    try:
        yield
    except PolicyRuntimeError as exc:
        exc.file = label(exc.file) if exc.file else exc.file
        raise


def run_session(session: Session, source: str | None = None, sources: Mapping[str, str] | None = None,
                label: Label = str, opened: Callable[[], None] | None = None) -> Decisions:
    """runOnce: open (its problems placed at ``source``; the cluster's own file by default), every
    configured action in order, close; the decisions.

    ``opened`` runs once the session is open, before the first action (``run``'s
    one-shot process stops the cycle collector there).  A policy failure raises
    PolicyRuntimeError naming its file as ``label`` shows it.
    """
    with policy_files_as(label):
        open_session(session, session.source if source is None else source, sources)
        if opened is not None:
            opened()
        session.run_actions()
        return close_session(session)
