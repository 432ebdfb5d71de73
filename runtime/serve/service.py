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

import json
import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fumarole.policy_lang.diagnostics import Diagnostic, FumaroleError, Span
from fumarole.runtime.authoring.scenario import decisions_as_expect
from fumarole.runtime.bundles.loader import LoadedBundle, source_bytes
from fumarole.runtime.framework.budget import StepBudget
from fumarole.runtime.framework.namespace import PolicyRuntimeError
from fumarole.runtime.framework.process_state import ProcessState
from fumarole.runtime.framework.session import Session
from fumarole.runtime.ingest.kube import (
    Cluster,
    cluster_from_objects,
    load_cluster,
    parse_time,
)
from fumarole.runtime.ingest.scheduler_options import SchedulerOptions, with_overrides
from fumarole.runtime.ingest.source import NotText, decode
from fumarole.runtime.ingest.yamlpos import MAX_DEPTH, nesting_depth
from fumarole.runtime.serve.decision_log import DecisionLog
from fumarole.runtime.serve.metrics import Metrics
from fumarole.runtime.serve.registry import BundleRegistry, Revision, diagnostics_json

if TYPE_CHECKING:
    from fumarole.runtime.serve.watch import Watcher

log = logging.getLogger("fumarole")


def parse_cluster(body: bytes, content_type: str, file: str = "request") -> Cluster:
    """A cluster from a request body: JSON (an object, a List or an array of objects) or YAML."""
    try:
        text = decode(body)
    except NotText as exc:
        raise FumaroleError([Diagnostic("K001", f"the body is {exc.reason}", file, Span(exc.line, exc.col))]) from None
    try:
        if "json" in content_type:
            doc = _json(text, file)
            return cluster_from_objects(doc if isinstance(doc, list) else [doc], file)
        return load_cluster(text, file)
    except (TypeError, AttributeError, ValueError, KeyError) as exc:
        # a well-formed document of the wrong shape (a list where a mapping belongs, ...)
        raise FumaroleError([Diagnostic("K000", f"malformed Kubernetes objects: {type(exc).__name__}: {exc}",
                                        file)]) from None


def _json(text: str, file: str) -> Any:
    """A JSON body, no deeper than YAML input may be (the objects are walked by recursive code)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FumaroleError([Diagnostic("K001", f"malformed JSON: {exc.msg}", file, Span(exc.lineno, exc.colno))],
                            {file: text}) from None
    except (RecursionError, ValueError) as exc:  # nesting past the C scanner's limit; numbers too long to convert
        reason = f"nested deeper than {MAX_DEPTH} levels (fumarole's limit)" if isinstance(exc, RecursionError) \
            else str(exc)
        raise FumaroleError([Diagnostic("K001", f"malformed JSON: {reason}", file)]) from None
    if nesting_depth(doc) > MAX_DEPTH:
        raise FumaroleError([Diagnostic("K001", f"malformed JSON: nested deeper than {MAX_DEPTH} levels "
                                        "(fumarole's limit)", file)])
    return doc


def _policy_failure(exc: PolicyRuntimeError, loaded: LoadedBundle) -> FumaroleError:
    return FumaroleError([Diagnostic("R001", f"policy failed while running: {exc.message}",
                                     loaded.label(exc.file) if exc.file else "session",
                                     Span(max(exc.line, 1), max(exc.col, 1)))])


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


class Service:
    def __init__(self, registry: BundleRegistry, decisions: DecisionLog, metrics: Metrics,
                 option_flags: dict[str, Any] | None = None, session_timeout: float | None = None) -> None:
        self.registry = registry
        self.decisions = decisions
        self.metrics = metrics
        self.option_flags = dict(option_flags or {})  # `fumarole serve --percentage-nodes-to-find ...`
        self.process_state = ProcessState()  # a freshly started scheduler
        self._cycle = threading.Lock()  # one scheduling cycle at a time, as in one Volcano process
        self.session_timeout = session_timeout  # every session, smoke runs included, ends by then (R001)
        self.last_cluster: Cluster | None = None
        self.last_shadow_error: dict[str, Any] | None = None
        registry.smoke = self.smoke

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
        detail = f" (last attempt: {attempt['source']})" if attempt else ""
        return FumaroleError([Diagnostic("S020", f"no valid bundle to serve{detail}", "fumarole serve",
                                         hint="give --bundle, --watch, or a --state-dir holding a last-known-good")])

    # -- sessions ------------------------------------------------------------------
    def options(self, loaded: LoadedBundle) -> SchedulerOptions:
        """The scheduler options a session of ``loaded`` runs with: its manifest's, under the flags."""
        return with_overrides(loaded.bundle.scheduler_options, self.option_flags)

    def decide(self, loaded: LoadedBundle, cluster: Cluster, clock: float | None = None,
               state: ProcessState | None = None) -> dict[str, Any]:
        """One session's decisions, as ``fumarole run --format json`` prints them.

        ``state`` is the process state the session reads and updates (a fresh
        one when None: smoke runs and shadows never touch the service's).
        Raises FumaroleError when a policy fails (R001: an error, a budget or the
        session timeout ran out) or finds the cluster unusable (a queue hierarchy
        with a cycle), as ``run`` would.
        """
        session = Session(loaded.bundle, cluster, now=clock, options=self.options(loaded),
                          process_state=state if state is not None else ProcessState(),
                          budget=StepBudget(timeout=self.session_timeout))
        try:
            session.open()
            if session.problems:
                raise FumaroleError([p.diagnostic("request") for p in session.problems])
            session.run_actions()
            return decisions_as_expect(session.close())
        except PolicyRuntimeError as exc:
            raise _policy_failure(exc, loaded) from None

    def smoke(self, loaded: LoadedBundle) -> None:
        """Run a candidate once on the last cluster a session succeeded on: failing there, it is not activated."""
        cluster = self.last_cluster
        if cluster is not None:
            self.decide(loaded, cluster)

    def run_session(self, cluster: Cluster, now: str | None = None) -> dict[str, Any]:
        """One session on the bundle active now (and the shadow beside it); the log entry it made."""
        try:
            clock = parse_time(now) if now else None
        except ValueError:
            raise FumaroleError([Diagnostic("K001", f"now={now!r} is not an RFC 3339 time", "request")]) from None
        with self._cycle:
            return self._run_cycle(cluster, clock)

    def _run_cycle(self, cluster: Cluster, clock: float | None) -> dict[str, Any]:
        revision = self.registry.active  # pinned: a swap from here on does not concern this session
        shadow = self.registry.shadow
        started_from = self.process_state.copy()  # the shadow decides from where the active session started
        started = time.perf_counter()
        try:
            decisions = self.decide(revision.loaded, cluster, clock, self.process_state)
        except FumaroleError:  # the session did not close, so it saved no process state
            self.metrics.sessions.inc(outcome="error")
            raise
        elapsed = time.perf_counter() - started
        self.last_cluster = cluster
        self.metrics.sessions.inc(outcome="ok")
        self.metrics.session_seconds.observe(elapsed)
        entry: dict[str, Any] = {"time": time.time(), "bundle": revision.stamp(), "decisions": decisions,
                                 "durationMs": round(elapsed * 1000, 3)}
        if shadow is not None:
            entry["shadow"] = self._shadow(shadow, cluster, clock, decisions, started_from)
        entry_id = self.decisions.append(entry)
        warnings = cluster.warnings_for(self.options(revision.loaded))
        return {"id": entry_id, **entry, "warnings": diagnostics_json(warnings)}

    def _shadow(self, shadow: Revision, cluster: Cluster, clock: float | None, active: dict,
                state: ProcessState) -> dict[str, Any]:
        """The shadow bundle's differences from the active decisions, deciding from ``state``.

        Whatever the shadow does -- a policy failure, a budget running out, an internal error --
        it never changes the active session's answer: the failure goes to the decision log entry,
        the shadow failure metric and /v1/status.
        """
        out: dict[str, Any] = {"bundle": shadow.stamp()}
        try:
            out["differences"] = decision_diff(active, self.decide(shadow.loaded, cluster, clock, state))
        except FumaroleError as err:
            out["error"] = err.diagnostics[0].headline()
        except Exception as exc:  # noqa: BLE001 - a shadow is an experiment: it must not fail the session
            log.exception("shadow bundle %s failed", shadow.digest)
            out["error"] = f"session:1:1: error[F004]: internal error in the shadow bundle: {type(exc).__name__}: {exc}"
        if "error" in out:
            self.metrics.shadow_failures.inc()
            self.last_shadow_error = {"at": time.time(), "bundle": shadow.stamp(), "error": out["error"]}
        return out

    def status(self) -> dict[str, Any]:
        m = self.metrics
        counts = {"sessions": int(m.sessions.value(outcome="ok")),
                  "failedSessions": int(m.sessions.value(outcome="error")),
                  "swaps": int(m.swaps.total()), "rollbacks": int(m.swaps.value(kind="rollback")),
                  "failedActivations": int(m.activation_failures.total()),
                  "shadowFailures": int(m.shadow_failures.total())}
        active = self.registry.active
        process = {"schedulerOptions": self.options(active.loaded).to_dict() if active else None,
                   "processState": self.process_state.to_dict()}
        return {**self.registry.status(), "counts": counts, "lastShadowError": self.last_shadow_error,
                "decisionLog": self.decisions.bounds(), **process}
