"""The hot-swap registry: which compiled bundle is active, which came before, which shadows it.

Sessions read :attr:`BundleRegistry.active` once and keep that reference for
their whole run; activation replaces the reference in one assignment after the
candidate is verified, compiled, smoke-run and persisted.  So no session sees
two revisions, none waits for a compile (compiling happens before the swap,
outside anything a session touches), and any failure leaves the old bundle
active.  One activation runs at a time: a concurrent one is refused at once
(:class:`Busy`) rather than queued, so the caller learns its upload lost.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import re
import shutil
import tempfile
import threading
import time
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from fumarole.policy_lang import file_errors
from fumarole.policy_lang.diagnostics import Diagnostic, FumaroleError
from fumarole.runtime.bundles.archive import DEFAULT_LIMITS, Limits
from fumarole.runtime.bundles.bundle import Bundle
from fumarole.runtime.bundles.library import standard_library
from fumarole.runtime.bundles.loader import LoadedBundle, load_artifact
from fumarole.runtime.serve import serve_errors
from fumarole.runtime.serve.metrics import Metrics
from fumarole.runtime.serve.state import StateDir


log = logging.getLogger("fumarole")


class Busy(Exception):
    """Another activation, rollback or shadow change is in progress."""


def iso_time(stamp: float) -> str:
    """RFC 3339 in UTC with milliseconds: how every time the service reports is written."""
    return _dt.datetime.fromtimestamp(stamp, _dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def logfmt(fields: dict[str, Any]) -> str:
    """One log line of ``key=value`` pairs (values with spaces or quotes quoted as JSON strings), the
    absent ones left out: a line an operator reads and a log pipeline splits."""
    parts = []
    for key, value in fields.items():
        if value is None or value == "":
            continue
        text = str(value)
        parts.append(f"{key}={json.dumps(text) if _NEEDS_QUOTES.search(text) else text}")
    return " ".join(parts)


_NEEDS_QUOTES = re.compile(r'[\s"=]')


def diagnostics_json(diagnostics: Sequence[Diagnostic]) -> list[dict[str, Any]]:
    return [{"code": d.code, "severity": d.severity, "message": d.message, "file": d.file,
             "line": d.span.line if d.positioned else None, "col": d.span.col if d.positioned else None,
             **({"hint": d.hint} if d.hint else {})} for d in diagnostics]


@dataclass(frozen=True)
class Revision:
    """A bundle as it was activated (or installed as shadow)."""

    loaded: LoadedBundle
    activated_at: float

    @property
    def bundle(self) -> Bundle:
        return self.loaded.bundle

    @property
    def digest(self) -> str:
        return self.loaded.digest

    def stamp(self) -> dict[str, str]:
        """What decisions are stamped with."""
        return {"name": self.bundle.name, "revision": self.bundle.revision, "digest": self.digest}

    def describe(self) -> dict[str, Any]:
        return {**self.stamp(), "activatedAt": iso_time(self.activated_at), "source": self.loaded.source,
                "signedBy": self.loaded.signed_by}


class BundleRegistry:
    def __init__(self, trusted: Sequence[Ed25519PublicKey] = (), state: StateDir | None = None,
                 metrics: Metrics | None = None, limits: Limits = DEFAULT_LIMITS,
                 smoke: Callable[[LoadedBundle], None] | None = None, keep: int = 10) -> None:
        self.trusted = tuple(trusted)
        self.state = state
        self.metrics = metrics or Metrics()
        self.limits = limits
        self.smoke = smoke
        self.active: Revision | None = None
        self.shadow: Revision | None = None
        self.last_attempt: dict[str, Any] | None = None
        self._previous: list[Revision] = []
        self._keep = keep
        self._lock = threading.Lock()
        # Where a candidate is compiled first (serve: a killable child with the session's time and
        # memory budget): a bundle whose compile runs for ever or grows without bound is refused
        # there, and the service compiles only what compiled there.
        self.trial: Callable[[Callable[[], Any], str], Any] | None = None

    def _workdir(self) -> Path | None:
        return self.state.compile_path if self.state is not None else None

    def _exclusive(self) -> None:
        if not self._lock.acquire(blocking=False):
            raise Busy("another bundle change is in progress; retry when it has finished")

    def _load(self, data: bytes, source: str) -> LoadedBundle:
        """Verify and compile, first in :attr:`trial` when there is one; any failure, a bug in the
        compiler included, is a FumaroleError."""
        if self.trial is not None:
            standard_library()  # compiled once here, so every trial child starts with it in memory
            scratch = Path(tempfile.mkdtemp(prefix="fumarole-trial-", dir=self._workdir()))
            try:  # a killed child leaves its unpacked files behind: they are in scratch, removed here
                self.trial(lambda: self._compile(data, source, scratch).digest, "bundle compile")
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
        return self._compile(data, source, self._workdir())

    def _compile(self, data: bytes, source: str, workdir: Path | None) -> LoadedBundle:
        try:
            return load_artifact(data, source, self.trusted, self.limits, workdir)
        except (FumaroleError, MemoryError):  # a MemoryError is the trial child's memory budget speaking
            raise
        except Exception as exc:  # noqa: BLE001 - a bundle that breaks the compiler is refused, not a 500
            log.exception("compiling %s failed", source)
            raise FumaroleError([file_errors.compile_crashed(source, exc)]) from None

    def _record(self, source: str, outcome: str, digest: str | None = None,
                diagnostics: Sequence[Diagnostic] = (), origin: str = "") -> None:
        """The last attempt, for /v1/status, and one log line for the operator."""
        at = iso_time(time.time())
        self.last_attempt = {"at": at, "source": source, "outcome": outcome, "digest": digest,
                             "diagnostics": diagnostics_json(diagnostics)}
        fields = {"event": "bundle", "outcome": outcome, "origin": origin, "source": source, "digest": digest,
                  "at": at, "diagnostics": len(diagnostics),
                  "first": diagnostics[0].headline() if diagnostics else None}
        log.info(logfmt(fields))

    def record_failure(self, source: str, origin: str, err: FumaroleError) -> None:
        """A bundle that could not be activated (or not even read): status and metrics say so."""
        self._record(source, "rejected", None, err.diagnostics, origin)
        self.metrics.activation_failures.inc(origin=origin)

    def activate(self, data: bytes, source: str, origin: str = "upload", persist: bool = True,
                 smoke: bool = True) -> tuple[str, Revision]:
        """Verify, compile, smoke-run, persist, swap.  Returns ("activated" | "unchanged", active revision).

        Raises FumaroleError (the old bundle stays active) or Busy.
        """
        self._exclusive()
        started = time.perf_counter()
        try:
            try:
                loaded = self._load(data, source)
                if self.active is not None and loaded.digest == self.active.digest:
                    self._record(source, "unchanged", loaded.digest, origin=origin)
                    return "unchanged", self.active
                if smoke and self.smoke is not None:
                    self.smoke(loaded)
                if persist and self.state is not None:
                    self.state.save_last_known_good(data)
            except FumaroleError as err:
                self.record_failure(source, origin, err)
                raise
            revision = Revision(loaded, time.time())
            if self.active is not None:
                self._previous = (self._previous + [self.active])[-self._keep:]
            self.active = revision
            self.metrics.swaps.inc(kind="activate")
            self._record(source, "activated", loaded.digest, loaded.bundle.warnings, origin)
            for warning in loaded.bundle.warnings:  # activated as Volcano's hot reload would, and said
                log.warning("bundle %s: %s", source, warning.headline())
            return "activated", revision
        finally:
            self.metrics.activation_seconds.observe(time.perf_counter() - started)
            self._lock.release()

    def rollback(self) -> Revision:
        """Back to the previous good revision; FumaroleError when there is none."""
        self._exclusive()
        try:
            if not self._previous:
                err = FumaroleError([serve_errors.nothing_to_roll_back_to()])
                log.info(logfmt({"event": "bundle", "outcome": "rollback refused", "origin": "rollback",
                                 "at": iso_time(time.time()), "first": err.diagnostics[0].headline()}))
                raise err
            target = self._previous[-1]
            if self.state is not None:
                self.state.save_last_known_good(target.loaded.archive)
            self._previous.pop()
            self.active = Revision(target.loaded, time.time())
            self.metrics.swaps.inc(kind="rollback")
            self._record("rollback", "rolled back", target.digest, origin="rollback")
            return self.active
        finally:
            self._lock.release()

    def set_shadow(self, data: bytes | None, source: str) -> Revision | None:
        """Install (verified like an activation) or, with ``data=None``, remove the shadow bundle."""
        self._exclusive()
        try:
            self.shadow = None if data is None else Revision(self._load(data, source), time.time())
            log.info(logfmt({"event": "shadow", "outcome": "installed" if self.shadow else "removed",
                             "source": source, "digest": self.shadow.digest if self.shadow else None,
                             "at": iso_time(time.time())}))
            return self.shadow
        finally:
            self._lock.release()

    def status(self) -> dict[str, Any]:
        active, shadow = self.active, self.shadow
        return {
            "active": active.describe() if active else None,
            "previous": [r.stamp() for r in reversed(self._previous)],
            "shadow": shadow.describe() if shadow else None,
            "lastActivation": self.last_attempt,
        }
