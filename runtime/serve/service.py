"""The long-running service behind ``fumarole serve``, without HTTP.

It owns the bundle registry, the decision log and the metrics, runs sessions
on the bundle that is active when they start (and on the shadow bundle beside
it), remembers the last cluster a session succeeded on so that activations
can smoke-run a candidate on it, and decides what to activate at start-up:
the persisted last-known-good (else ``--bundle``), then the watched bundle on
top if it is valid.  HTTP (``server.py``) only maps requests onto these
methods.

The service is one Volcano scheduler process: its sessions run one at a time
and share one :class:`ProcessState` (the node scan's start index, tdm's last
eviction, ...), which a bundle swap keeps, as Volcano keeps it when it
reloads its configuration (docs/scheduler-options.md).  The scheduler
options are the active bundle's ``schedulerOptions`` under the command
line's flags.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from fumarole.policy_lang.diagnostics import FumaroleError, Span
from fumarole.runtime.authoring.scenario import decisions_as_expect
from fumarole.runtime.bundles.loader import LoadedBundle, source_bytes
from fumarole.runtime.framework.budget import StepBudget
from fumarole.runtime.framework.lifecycle import new_session, run_session
from fumarole.runtime.framework.namespace import PolicyRuntimeError
from fumarole.runtime.framework.process_state import ProcessState
from fumarole.runtime.ingest.kube import Cluster, cluster_from_objects, load_cluster
from fumarole.runtime.ingest.kube_convert import parse_time
from fumarole.runtime.ingest.queue_tree import HierarchyProblem
from fumarole.runtime.ingest.scheduler_options import SchedulerOptions, with_overrides
from fumarole.runtime.ingest.source import NotText, decode
from fumarole.runtime.ingest.strict_json import strict_json
from fumarole.runtime.serve.contained import DEFAULT_MEMORY_BUDGET, Containment
from fumarole.runtime.serve.decision_log import DecisionLog
from fumarole.runtime.serve import serve_errors
from fumarole.runtime.serve.metrics import Metrics
from fumarole.runtime.ingest import kube_errors
from fumarole.runtime.serve.registry import BundleRegistry, Revision, diagnostics_json, iso_time

if TYPE_CHECKING:
    from fumarole.runtime.serve.watch import Watcher

log = logging.getLogger("fumarole")


# A session body holds at most this many YAML documents or JSON objects (at the top or in a List's
# items): far above a real cluster dump in 32 MiB, far below what makes refusing one slow.
MAX_BODY_OBJECTS = 100_000
# A line that starts with `---` starts a document wherever it is (YAML forbids it inside scalars).
_DOCUMENT_START = re.compile(r"^---(?=[ \t\r\n]|$)", re.MULTILINE)


def parse_cluster(body: bytes, content_type: str, file: str = "request") -> Cluster:
    """A cluster from a request body: JSON (an object, a List or an array of objects) or YAML."""
    try:
        text = decode(body)
    except NotText as exc:
        raise FumaroleError([kube_errors.unreadable_body(file, Span(exc.line, exc.col), exc.reason)]) from None
    if "json" in content_type:
        doc = strict_json(text, file)
        objects = doc if isinstance(doc, list) else [doc]
        _check_count(sum(_items(o) for o in objects), file)
        return cluster_from_objects(objects, file)
    _check_documents(text, file)
    return load_cluster(text, file)


def _items(obj: Any) -> int:
    """How many objects ``obj`` stands for: a List's items, else one."""
    items = obj.get("items") if isinstance(obj, dict) and obj.get("kind") == "List" else None
    return len(items) if isinstance(items, list) else 1


def _check_count(count: int, file: str) -> None:
    if count > MAX_BODY_OBJECTS:
        raise FumaroleError([kube_errors.too_many_body_objects(file, count, MAX_BODY_OBJECTS)])


def _check_documents(text: str, file: str) -> None:
    """Refuse a YAML body of more documents than the limit before reading any, at the first one too many."""
    for count, start in enumerate(_DOCUMENT_START.finditer(text), start=1):
        if count > MAX_BODY_OBJECTS:
            line = text.count("\n", 0, start.start()) + 1
            raise FumaroleError([kube_errors.too_many_body_documents(file, line, MAX_BODY_OBJECTS)])


def _policy_failure(exc: PolicyRuntimeError, loaded: LoadedBundle) -> FumaroleError:
    return FumaroleError([serve_errors.policy_failed(loaded.label(exc.file) if exc.file else "session",
                                                     Span(max(exc.line, 1), max(exc.col, 1)), exc.message)])


def session_failed(err: FumaroleError) -> bool:
    """Whether the bundle failed (a policy error, a budget, the timeout, a crash: HTTP 500), not the input."""
    return bool(err.diagnostics) and err.diagnostics[0].code in ("R001", "F004")


def decision_diff(active: dict, shadow: dict) -> dict:
    """Per decision kind, what differs; one level into mappings (binds, phases, ...)."""
    out: dict[str, Any] = {}
    for key in sorted(set(active) | set(shadow)):
        a, s = active.get(key), shadow.get(key)
        if a == s:
            continue
        if isinstance(a, dict) and isinstance(s, dict):
            out[key] = {k: {"active": a.get(k), "shadow": s.get(k)}
                        for k in sorted(set(a) | set(s)) if a.get(k) != s.get(k)}
        else:
            out[key] = {"active": a, "shadow": s}
    return out


ClusterSource = Callable[[], Cluster]


class Service:
    def __init__(self, registry: BundleRegistry, decisions: DecisionLog, metrics: Metrics,
                 option_flags: dict[str, Any] | None = None, session_timeout: float | None = None,
                 memory_budget: int | None = DEFAULT_MEMORY_BUDGET, total_memory: int | None = None) -> None:
        self.registry = registry
        self.decisions = decisions
        self.metrics = metrics
        self.option_flags = dict(option_flags or {})  # `fumarole serve --percentage-nodes-to-find ...`
        self.process_state = ProcessState()  # a freshly started scheduler
        self._cycle = threading.Lock()  # one scheduling cycle at a time, as in one Volcano process
        # every session, shadow session and smoke run runs in a child that is killed past the timeout
        # ... each with memory_budget, and at most total_memory for all of them at once (None: no limit)
        self.containment = Containment(session_timeout, memory_budget, total_memory)
        self.last_input: ClusterSource | None = None  # what the last good session read, for smoke runs
        self.last_shadow_error: dict[str, Any] | None = None
        self.last_session_error: dict[str, Any] | None = None
        registry.smoke = self.smoke
        registry.trial = self.containment.run  # a candidate compiles first where it can be killed

    @property
    def session_timeout(self) -> float | None:
        """Seconds a session, shadow session or smoke run may take (``--session-timeout``)."""
        return self.containment.wall_seconds

    @session_timeout.setter
    def session_timeout(self, seconds: float | None) -> None:
        self.containment.wall_seconds = seconds

    def stop(self) -> None:
        """Shutdown: kill the sessions still running; nothing new starts."""
        self.containment.stop()

    # -- start-up ------------------------------------------------------------------
    def start(self, bundle: Path | None = None, watcher: "Watcher | None" = None) -> None:
        """Activate what start-up should serve; raise FumaroleError when nothing valid is left."""
        state = self.registry.state
        saved = state.last_known_good() if state is not None else None
        if saved is not None:
            self._try(saved, f"{state.last_known_good_path}", persist=False)
        if self.registry.active is None and bundle is not None:
            self._try(source_bytes(bundle), str(bundle))
        elif bundle is not None:
            log.warning("resuming the last-known-good bundle; --bundle %s is used only when the state folder "
                        "holds none (upload it to activate it)", bundle)
        if watcher is not None:
            watcher.poll()
        if self.registry.active is None:
            raise self.registry_error()

    def _try(self, data: bytes, source: str, persist: bool = True) -> None:
        try:
            self.registry.activate(data, source, origin="startup", persist=persist)
        except FumaroleError as err:
            log.warning("bundle %s not activated:\n%s", source, err.render())

    def registry_error(self) -> FumaroleError:
        attempt = self.registry.last_attempt
        return FumaroleError([serve_errors.nothing_to_serve(attempt["source"] if attempt else None)])

    # -- sessions ------------------------------------------------------------------
    def options(self, loaded: LoadedBundle) -> SchedulerOptions:
        """The scheduler options a session of ``loaded`` runs with: its manifest's, under the flags."""
        return with_overrides(loaded.bundle.scheduler_options, self.option_flags)

    def decide(self, loaded: LoadedBundle, cluster: Cluster, clock: float | None = None,
               state: ProcessState | None = None) -> tuple[dict[str, Any], list[HierarchyProblem]]:
        """One session's decisions, as ``fumarole run --format json`` prints them, and what the
        session found opening (a broken queue hierarchy, K110), which ``run`` prints as warnings.

        ``state`` is the process state the session reads and updates (a fresh
        one when None: smoke runs and shadows never touch the service's).
        Raises FumaroleError when a policy fails (R001: an error, a budget or the
        session timeout ran out), as ``run`` would.
        """
        session = new_session(loaded.bundle, cluster, now=clock, options=self.options(loaded),
                              process_state=state if state is not None else ProcessState(),
                              budget=StepBudget(timeout=self.session_timeout))
        try:
            return decisions_as_expect(run_session(session, "request")), session.problems
        except PolicyRuntimeError as exc:
            raise _policy_failure(exc, loaded) from None

    def smoke(self, loaded: LoadedBundle) -> None:
        """Run a candidate once on what the last good session read: failing there, it is not activated."""
        source = self.last_input
        if source is not None:
            self.containment.run(lambda: self.decide(loaded, source()), "smoke run")

    def run_session(self, cluster: Cluster | bytes, now: str | None = None,
                    content_type: str = "application/yaml") -> dict[str, Any]:
        """One session on the bundle active now (and the shadow beside it); the log entry it made.

        ``cluster`` is parsed objects or a request body, which is parsed in the session's child
        process: a body that is slow to read is bounded like a policy that is slow to run.
        """
        try:
            clock = parse_time(now) if now else None
        except (ValueError, OverflowError):
            raise FumaroleError([kube_errors.bad_request_time(now)]) from None
        body_text: Callable[[], str | None] = lambda: None  # noqa: E731
        if isinstance(cluster, Cluster):
            source: ClusterSource = lambda: cluster  # noqa: E731
        else:
            body = cluster
            source = lambda: parse_cluster(body, content_type)  # noqa: E731
            body_text = lambda: decode(body)  # noqa: E731
        try:
            with self._cycle:
                revision, entry, warnings, started_from = self._run_cycle(source, clock, body_text)
        except FumaroleError as err:  # the session did not close, so it saved no process state
            if session_failed(err):
                self.metrics.sessions.inc(outcome="error")
                self.last_session_error = {"at": iso_time(time.time()), "bundle": self.registry.active.stamp(),
                                           "error": err.diagnostics[0].headline()}
            else:
                self.metrics.sessions.inc(outcome="rejected")
            raise
        shadow = self.registry.shadow
        if shadow is not None:  # outside the cycle: a slow shadow delays only its own answer
            entry["shadow"] = self._shadow(shadow, source, clock, entry["decisions"], started_from)
        entry_id = self.decisions.append(entry)
        return {"id": entry_id, **entry, "warnings": warnings}

    def _run_cycle(self, source: ClusterSource, clock: float | None, body_text: Callable[[], str | None]) \
            -> tuple[Revision, dict[str, Any], list[dict], ProcessState]:
        revision = self.registry.active  # pinned: a swap from here on does not concern this session
        started_from = self.process_state.copy()  # the shadow decides from where the active session started

        def session() -> tuple[dict, dict, list[dict]]:
            cluster = source()
            decisions, problems = self.decide(revision.loaded, cluster, clock, self.process_state)
            text = body_text() if problems else None  # a body's problems are placed in it, as `run` places a file's
            opened = [p.diagnostic(cluster.file, text) for p in problems]
            warnings = diagnostics_json((*cluster.warnings_for(self.options(revision.loaded)), *opened))
            return decisions, self.process_state.to_dict(), warnings

        started = time.perf_counter()
        decisions, state, warnings = self.containment.run(session)
        elapsed = time.perf_counter() - started
        self.process_state = ProcessState.from_dict(state)
        self.last_input = source
        self.metrics.sessions.inc(outcome="ok")
        self.metrics.session_seconds.observe(elapsed)
        entry: dict[str, Any] = {"time": iso_time(time.time()), "bundle": revision.stamp(), "decisions": decisions,
                                 "durationMs": round(elapsed * 1000, 3)}
        return revision, entry, warnings, started_from

    def _shadow(self, shadow: Revision, source: ClusterSource, clock: float | None, active: dict,
                state: ProcessState) -> dict[str, Any]:
        """The shadow bundle's differences from the active decisions, deciding from ``state``.

        Whatever the shadow does -- a policy failure, a budget or the timeout running out, a
        crash -- it never changes the active session's answer: the failure goes to the decision
        log entry, the shadow failure metric and /v1/status.
        """
        out: dict[str, Any] = {"bundle": shadow.stamp()}
        try:
            decided = self.containment.run(lambda: self.decide(shadow.loaded, source(), clock, state)[0],
                                           "shadow session")
            out["differences"] = decision_diff(active, decided)
        except FumaroleError as err:
            out["error"] = err.diagnostics[0].headline()
        if "error" in out:
            self.metrics.shadow_failures.inc()
            self.last_shadow_error = {"at": iso_time(time.time()), "bundle": shadow.stamp(), "error": out["error"]}
        return out

    def status(self) -> dict[str, Any]:
        m = self.metrics
        counts = {"sessions": int(m.sessions.value(outcome="ok")),
                  "failedSessions": int(m.sessions.value(outcome="error")),
                  "rejectedSessions": int(m.sessions.value(outcome="rejected")),
                  "swaps": int(m.swaps.total()), "rollbacks": int(m.swaps.value(kind="rollback")),
                  "failedActivations": int(m.activation_failures.total()),
                  "shadowFailures": int(m.shadow_failures.total())}
        active = self.registry.active
        process = {"schedulerOptions": self.options(active.loaded).to_dict() if active else None,
                   "processState": self.process_state.to_dict()}
        return {**self.registry.status(), "counts": counts, "lastShadowError": self.last_shadow_error,
                "lastSessionError": self.last_session_error,
                "decisionLog": self.decisions.bounds(), **process}
