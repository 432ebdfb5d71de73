"""The diagnostics of a trace or sweep file (T codes, docs/diagnostics.md): T002, a trace that is
not what replay reads; T003, a duration or time it cannot use; T004, a sweep file that is not
what a sweep reads.  One constructor per problem (as policy_lang's ``declaration_errors.py``):
the message and hint are written here once; the readers (``trace.py``, ``sweep.py``) pass the
facts and the place their positioned reader found.  T001, a file that is not YAML, is the
YAML reader's own message (``yamlpos.load_file``).
"""

from __future__ import annotations

from typing import Sequence

from fumarole.policy_lang.diagnostics import Diagnostic, Span


# -- T002 a malformed trace ----------------------------------------------------------------------

def not_a_trace(file: str, at: Span) -> Diagnostic:
    return Diagnostic("T002", "a trace is a mapping with `kind: Trace`", file, at)


def unknown_trace_key(file: str, at: Span, key: object, keys: Sequence[str]) -> Diagnostic:
    return Diagnostic("T002", f"unknown trace key {key!r}", file, at, hint=f"a trace has {', '.join(keys)}")


def metadata_not_a_mapping(file: str, at: Span) -> Diagnostic:
    return Diagnostic("T002", "metadata is a mapping (name: ...)", file, at)


def cluster_not_objects(file: str, at: Span) -> Diagnostic:
    return Diagnostic("T002", "cluster is a file name (a cluster dump) or a list of Kubernetes objects", file, at)


def run_times_not_a_mapping(file: str, at: Span) -> Diagnostic:
    return Diagnostic("T002", "runTimes maps namespace/pod to a duration", file, at)


def events_not_a_list(file: str, at: Span) -> Diagnostic:
    return Diagnostic("T002", "events is a list", file, at)


def event_shape(file: str, at: Span, index: int, kinds: Sequence[str]) -> Diagnostic:
    return Diagnostic("T002", f"event {index} needs `at` and exactly one of {', '.join(kinds)}", file, at)


def unknown_event_key(file: str, at: Span, key: object) -> Diagnostic:
    return Diagnostic("T002", f"unknown event key {key!r}", file, at)


def submit_shape(file: str, at: Span) -> Diagnostic:
    return Diagnostic("T002", "submit has `podGroup` (a PodGroup) and `tasks` (a list of {pod, runTime, replicas})",
                      file, at)


def task_shape(file: str, at: Span) -> Diagnostic:
    return Diagnostic("T002", "a task is {pod: <Pod>, runTime: <duration>, replicas: <count>}", file, at)


def replicas_not_positive(file: str, at: Span, replicas: str) -> Diagnostic:
    """``replicas``: the value as the trace reader quotes it (clipped)."""
    return Diagnostic("T002", f"replicas must be a positive integer, not {replicas}", file, at)


def too_many_pods(file: str, at: Span, replicas: int, limit: int) -> Diagnostic:
    return Diagnostic("T002", f"replicas {replicas:,} would take the trace past {limit:,} pods (fumarole's limit)",
                      file, at)


def delete_target(file: str, at: Span) -> Diagnostic:
    return Diagnostic("T002", "delete names a PodGroup as namespace/name", file, at)


def add_node_not_a_node(file: str, at: Span) -> Diagnostic:
    return Diagnostic("T002", "addNode is a Node object", file, at)


def remove_node_target(file: str, at: Span) -> Diagnostic:
    return Diagnostic("T002", "removeNode names a node", file, at)


# -- T003 a duration or time replay cannot use ------------------------------------------------------

def bad_duration(file: str, at: Span, what: str, value: str) -> Diagnostic:
    """``what``: the duration's place in words (``event 0: at``); ``value`` as quoted (clipped)."""
    return Diagnostic("T003", f"{what} must be a duration (\"90s\", \"1h30m\") or a number of seconds, "
                      f"at most 100 years, not {value}", file, at)


def bad_start(file: str, at: Span, value: str) -> Diagnostic:
    """``value`` as quoted (clipped)."""
    return Diagnostic("T003", "start must be an RFC 3339 time with a century to run before year 10000, "
                      f"not {value}", file, at)


def bad_sweep_duration(file: str, at: Span, option: str, value: object, zero: bool) -> Diagnostic:
    """``zero``: the option was zero where it must be above (``period``, ``maxWall``)."""
    return Diagnostic("T003", f"options.{option} must be a duration{' above zero' if zero else ''} "
                      f"of at most 100 years, not {str(value)[:40]!r}", file, at)


# -- T004 a malformed sweep file ------------------------------------------------------------------

def not_a_sweep(file: str, at: Span) -> Diagnostic:
    return Diagnostic("T004", "a sweep file is a mapping with `kind: Sweep`", file, at)


def unknown_sweep_key(file: str, at: Span, key: object, keys: Sequence[str]) -> Diagnostic:
    return Diagnostic("T004", f"unknown sweep key {key!r}", file, at, hint=f"a sweep has {', '.join(keys)}")


def sweep_paths_not_a_list(file: str, at: Span, key: str) -> Diagnostic:
    """``key``: ``traces`` or ``bundles``."""
    return Diagnostic("T004", f"{key} is a non-empty list of paths (relative to the sweep file)", file, at)


def grid_shape(file: str, at: Span) -> Diagnostic:
    return Diagnostic("T004", "grid maps a plugin argument's key to a non-empty list of values", file, at)


def sweep_options_not_a_mapping(file: str, at: Span) -> Diagnostic:
    return Diagnostic("T004", "options maps period, until, grace, pingpongWindow, settle, maxWall, onEvict to values",
                      file, at)


def unknown_sweep_option(file: str, at: Span, key: object) -> Diagnostic:
    return Diagnostic("T004", f"unknown or bad sweep option {key!r}", file, at)


def too_many_replays(file: str, at: Span, runs: int, limit: int) -> Diagnostic:
    return Diagnostic("T004", f"the sweep asks for {runs:,} replays (traces x bundles x grid points), more than "
                      f"{limit:,} (fumarole's limit)", file, at)
