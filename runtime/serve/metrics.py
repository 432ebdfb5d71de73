"""Counters and histograms rendered in the Prometheus text exposition format (version 0.0.4).

A dozen lines of formatting do not justify a client library dependency; what
matters is the format: ``# HELP`` / ``# TYPE`` once per family, label values
escaped, cumulative ``_bucket`` lines ending in ``le="+Inf"``, then ``_sum``
and ``_count``.
"""

from __future__ import annotations

import bisect
import threading
from typing import Mapping

Labels = tuple[tuple[str, str], ...]
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(labels: Labels, extra: str = "") -> str:
    parts = [f'{k}="{_escape(v)}"' for k, v in labels] + ([extra] if extra else [])
    return "{" + ",".join(parts) + "}" if parts else ""


def _number(value: float) -> str:
    return repr(float(value)) if value != int(value) else str(int(value))


class Counter:
    def __init__(self, name: str, help_text: str) -> None:
        self.name, self.help = name, help_text
        self._values: dict[Labels, float] = {}
        self._lock = threading.Lock()

    def inc(self, by: float = 1, **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        with self._lock:
            self._values[key] = self._values.get(key, 0) + by

    def value(self, **labels: str) -> float:
        return self._values.get(tuple(sorted(labels.items())), 0)

    def total(self) -> float:
        """The sum over every label set."""
        with self._lock:
            return sum(self._values.values())

    def render(self) -> list[str]:
        with self._lock:
            items = sorted(self._values.items())
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} counter"]
        lines += [f"{self.name}{_labels(k)} {_number(v)}" for k, v in items] or [f"{self.name} 0"]
        return lines


class Histogram:
    def __init__(self, name: str, help_text: str, buckets: tuple[float, ...] = LATENCY_BUCKETS) -> None:
        self.name, self.help, self.buckets = name, help_text, buckets
        self._counts = [0] * (len(buckets) + 1)
        self._sum = 0.0
        self._lock = threading.Lock()

    def observe(self, value: float) -> None:
        with self._lock:
            self._counts[bisect.bisect_left(self.buckets, value)] += 1
            self._sum += value

    def render(self) -> list[str]:
        with self._lock:
            counts, total = list(self._counts), self._sum
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} histogram"]
        running = 0
        for bound, count in zip(self.buckets + (float("inf"),), counts):
            running += count
            le = "+Inf" if bound == float("inf") else repr(bound)
            lines.append(f'{self.name}_bucket{{le="{le}"}} {running}')
        lines += [f"{self.name}_sum {_number(total)}", f"{self.name}_count {running}"]
        return lines


class Metrics:
    """The service's metric families."""

    def __init__(self) -> None:
        self.sessions = Counter("fumarole_sessions_total",
                                "Sessions, by outcome (ok; error: the bundle failed; rejected: malformed input).")
        self.session_seconds = Histogram("fumarole_session_duration_seconds",
                                         "Wall time of one session, from parsed cluster to decisions.")
        self.swaps = Counter("fumarole_swaps_total", "Changes of the active bundle (activations and rollbacks).")
        self.activation_failures = Counter("fumarole_activation_failures_total",
                                           "Bundles refused at activation, by source (upload, watch, startup).")
        self.activation_seconds = Histogram("fumarole_activation_duration_seconds",
                                            "Verify, compile, smoke-run and persist time of one activation.")
        self.shadow_failures = Counter("fumarole_shadow_failures_total",
                                       "Sessions whose shadow bundle failed (the active decisions were unaffected).")
        self.extender = Counter("fumarole_extender_requests_total", "Volcano extender calls, by verb and status.")

    def render(self, info: Mapping[str, str]) -> str:
        """All families, plus the active bundle as an info gauge."""
        lines: list[str] = []
        for family in (self.sessions, self.session_seconds, self.swaps, self.activation_failures,
                       self.activation_seconds, self.shadow_failures, self.extender):
            lines += family.render()
        lines += ["# HELP fumarole_active_bundle_info The active bundle (always 1).",
                  "# TYPE fumarole_active_bundle_info gauge",
                  f"fumarole_active_bundle_info{_labels(tuple(sorted(info.items())))} 1"]
        return "\n".join(lines) + "\n"
