"""The trace format (docs/traces.md): an initial cluster and timed events, read with positions.

A trace is what a replay plays: the cluster at virtual time zero (a dump is a
valid start) and, in time order, job submissions (a PodGroup and its pods,
each task with a run time), job deletions, and nodes added or removed.  Every
Kubernetes object in it is validated as ``fumarole run`` validates a dump, so a
bad trace is reported with ``file:line:col`` before anything runs.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fumarole.policy_lang import file_errors
from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.api.quoting import clip
from fumarole.runtime.framework.go_semantics import parse_duration
from fumarole.runtime.ingest.kube import Cluster, cluster_from_objects, load_cluster
from fumarole.runtime.ingest.kube_convert import GROUP_NAME, ObjectReader, parse_time
from fumarole.runtime.ingest.source import NotText, decode
from fumarole.runtime.ingest.yamlpos import load_file
from fumarole.runtime.whatif import trace_errors

EVENT_KINDS = ("submit", "delete", "addNode", "removeNode")
_TOP_KEYS = ("apiVersion", "kind", "metadata", "start", "cluster", "runTimes", "events")
DEFAULT_START = "2026-01-01T00:00:00Z"
# Limits checked before anything is built, so a hostile trace is one positioned error, not hours or gigabytes.
MAX_SECONDS = 100 * 365 * 86400.0  # any duration or event time: a century of virtual time
MAX_TRACE_PODS = 200_000  # pods a trace's submissions create in all (the XL benchmark cluster has 100,000)
MAX_CLUSTER_BYTES = 1 << 30  # a `cluster:` dump file


@dataclass(frozen=True)
class TaskSpec:
    """One pod to create at submission; ``run_time`` None means it runs until deleted."""

    pod: dict
    run_time: float | None


@dataclass(frozen=True)
class Event:
    at: float  # seconds after the trace's start
    kind: str  # one of EVENT_KINDS
    pod_group: dict | None = None  # submit
    tasks: tuple[TaskSpec, ...] = ()  # submit
    target: str = ""  # delete: namespace/name of the PodGroup; removeNode: the node's name
    node: dict | None = None  # addNode


@dataclass(frozen=True)
class Trace:
    name: str
    start: float  # the virtual clock's zero, seconds since the epoch
    cluster: Cluster
    run_times: dict[str, float]  # namespace/pod of the initial cluster -> seconds left to run
    events: tuple[Event, ...]  # sorted by time, stable
    file: str

    @property
    def duration(self) -> float:
        """The time of the last event (0 for a trace that only drains its initial cluster)."""
        return self.events[-1].at if self.events else 0.0


def rfc3339(epoch: float) -> str:
    stamp = _dt.datetime.fromtimestamp(epoch, _dt.timezone.utc)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S") + (f".{stamp.microsecond:06d}" if stamp.microsecond else "") + "Z"


def seconds(value: Any) -> float | None:
    """A duration as Go writes it ("90s", "1h30m") or a number of seconds, at most MAX_SECONDS;
    None when it is neither (infinities, NaN and negative numbers included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        parsed: float | None = float(value) if not isinstance(value, int) or abs(value) <= MAX_SECONDS else None
    else:
        parsed = parse_duration(str(value))
    return parsed if parsed is not None and math.isfinite(parsed) and 0 <= parsed <= MAX_SECONDS else None


class _TraceReader(ObjectReader):
    """The positioned reader of a trace file, with what a trace adds: its text, durations, the
    Kubernetes objects it embeds, and the pods its submissions may still hold."""

    def __init__(self, file: str, text: str) -> None:
        super().__init__(file)
        self.text = text
        self.pods_left = MAX_TRACE_PODS  # pods the submissions read so far leave to the rest

    def duration(self, owner: dict, key: str, what: str) -> float | None:
        value = seconds(owner[key])
        if value is None:
            self.report(trace_errors.bad_duration(self.file, self.at(owner, key), what, _clip(owner[key])))
        return value

    def objects(self, docs: list, what: Any) -> Cluster | None:
        """Kubernetes objects validated as a cluster dump is, positions in this file."""
        try:
            return cluster_from_objects(list(docs), self.file, self.text)
        except FumaroleError as err:
            self.diagnostics.extend(err.diagnostics)
            return None

    def error(self) -> FumaroleError:
        return FumaroleError(self.diagnostics, {self.file: self.text})


def load_trace(path: Path) -> Trace:
    """Read and validate a trace file; raises FumaroleError listing every problem found."""
    doc, text = load_file(path, "T001")
    return trace_from_document(doc, path, text)


def trace_from_document(doc: Any, path: Path, text: str) -> Trace:
    reader = _TraceReader(str(path), text)
    if not isinstance(doc, dict) or doc.get("kind") != "Trace":
        reader.report(trace_errors.not_a_trace(reader.file, reader.at(doc if isinstance(doc, dict) else None)))
        raise reader.error()
    for key in doc:
        if key not in _TOP_KEYS:
            reader.report(trace_errors.unknown_trace_key(reader.file, reader.at_key(doc, key), key, _TOP_KEYS))
    if not isinstance(doc.get("metadata") or {}, dict):
        reader.report(trace_errors.metadata_not_a_mapping(reader.file, reader.at(doc, "metadata")))
    start = _start(doc, reader)
    cluster = _initial_cluster(doc, path, reader)
    run_times = _run_times(doc, reader)
    events = _events(doc, reader)
    if reader.diagnostics:
        raise reader.error()
    name = str((doc.get("metadata") or {}).get("name") or path.stem)[:200]
    return Trace(name, start, cluster or Cluster(), run_times, tuple(sorted(events, key=lambda e: e.at)), str(path))


def _clip(value: Any, limit: int = 40) -> str:
    """A value as a diagnostic quotes it: its repr (a mapping or list by its type), clipped."""
    return clip(repr(value) if not isinstance(value, (dict, list)) else type(value).__name__, limit)


def _start(doc: dict, reader: _TraceReader) -> float:
    """The virtual clock's zero; every event time after it (up to MAX_SECONDS) must still be a date."""
    raw = doc.get("start", DEFAULT_START)
    try:
        start = parse_time(raw)
        rfc3339(start), rfc3339(start + MAX_SECONDS)
        return start
    except (TypeError, ValueError, OverflowError, OSError):
        reader.report(trace_errors.bad_start(reader.file, reader.at(doc, "start"), _clip(raw)))
        return 0.0


def _initial_cluster(doc: dict, path: Path, reader: _TraceReader) -> Cluster | None:
    raw = doc.get("cluster")
    if raw is None:
        return Cluster()
    if isinstance(raw, str):  # a dump next to the trace
        dump = path.parent / raw
        problem, dump_text = _read_dump(path, raw)
        if dump_text is None:
            reader.report(file_errors.trace_cluster_unreadable(reader.file, reader.at(doc, "cluster"), _clip(raw, 200),
                                                               problem))
            return None
        try:
            return load_cluster(dump_text, str(dump))
        except FumaroleError as err:
            raise FumaroleError(err.diagnostics, err.sources) from None
    if isinstance(raw, list):
        return reader.objects(raw, raw)
    reader.report(trace_errors.cluster_not_objects(reader.file, reader.at(doc, "cluster")))
    return None


def _read_dump(trace: Path, name: str) -> tuple[str, str | None]:
    """The text of the trace's ``cluster:`` file, or why not.  Only a regular file in the trace's
    folder or below, of at most MAX_CLUSTER_BYTES, UTF-8: a trace cannot make replay read (and quote
    in its diagnostics) any file of the machine, nor block on a device or a pipe."""
    folder = trace.parent.resolve()
    if "\0" in name or Path(name).is_absolute():
        return "it must be a path relative to the trace's folder", None
    target = (folder / name).resolve()
    if target != folder and folder not in target.parents:
        return "it must be in the trace's folder or below it (symbolic links included)", None
    try:
        handle = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as exc:
        return str(exc.strerror), None
    info = os.fstat(handle)
    if not stat.S_ISREG(info.st_mode):  # a folder, a device, a pipe: nothing is read from it
        os.close(handle)
        return "not a regular file", None
    with os.fdopen(handle, "rb") as file:
        if info.st_size > MAX_CLUSTER_BYTES:
            return f"larger than {MAX_CLUSTER_BYTES >> 20:,} MB (fumarole's limit)", None
        data = file.read(MAX_CLUSTER_BYTES + 1)
    if len(data) > MAX_CLUSTER_BYTES:
        return f"larger than {MAX_CLUSTER_BYTES >> 20:,} MB (fumarole's limit)", None
    try:
        return "", decode(data)
    except NotText as exc:
        return f"{exc.reason} at line {exc.line}, column {exc.col}", None


def _run_times(doc: dict, reader: _TraceReader) -> dict[str, float]:
    raw = doc.get("runTimes") or {}
    if not isinstance(raw, dict):
        reader.report(trace_errors.run_times_not_a_mapping(reader.file, reader.at(doc, "runTimes")))
        return {}
    out = {}
    for key in raw:
        value = reader.duration(raw, key, f"runTimes[{key}]")
        if value is not None:
            out[str(key)] = value
    return out


def _events(doc: dict, reader: _TraceReader) -> list[Event]:
    raw = doc.get("events") or []
    if not isinstance(raw, list):
        reader.report(trace_errors.events_not_a_list(reader.file, reader.at(doc, "events")))
        return []
    out: list[Event] = []
    for i, item in enumerate(raw):
        kinds = [k for k in EVENT_KINDS if isinstance(item, dict) and k in item]
        if not isinstance(item, dict) or "at" not in item or len(kinds) != 1:
            reader.report(trace_errors.event_shape(reader.file, reader.at(raw, i), i, EVENT_KINDS))
            continue
        unknown = [k for k in item if k not in ("at", *EVENT_KINDS)]
        if unknown:
            reader.report(trace_errors.unknown_event_key(reader.file, reader.at_key(item, unknown[0]), unknown[0]))
        at = reader.duration(item, "at", f"event {i}: at")
        if at is None:
            continue
        event = _EVENT_READERS[kinds[0]](item, at, reader)
        if event is not None:
            out.append(event)
    return out


def _submit(item: dict, at: float, reader: _TraceReader) -> Event | None:
    body = item["submit"]
    if not isinstance(body, dict) or not isinstance(body.get("podGroup"), dict) \
            or not isinstance(body.get("tasks"), list):
        reader.report(trace_errors.submit_shape(reader.file, reader.at(item, "submit")))
        return None
    pod_group = body["podGroup"]
    meta = pod_group.get("metadata") if isinstance(pod_group.get("metadata"), dict) else {}
    group, namespace = meta.get("name", ""), meta.get("namespace") or "default"
    tasks: list[TaskSpec] = []
    for j, entry in enumerate(body["tasks"]):
        if not isinstance(entry, dict) or not isinstance(entry.get("pod"), dict):
            reader.report(trace_errors.task_shape(reader.file, reader.at(body["tasks"], j)))
            continue
        run_time = reader.duration(entry, "runTime", "runTime") if "runTime" in entry else None
        replicas = entry.get("replicas", 1)
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 1:
            place = reader.at(entry, "replicas")
            reader.report(trace_errors.replicas_not_positive(reader.file, place, _clip(replicas)))
            continue
        if replicas > reader.pods_left:
            place = reader.at(entry, "replicas")
            reader.report(trace_errors.too_many_pods(reader.file, place, replicas, MAX_TRACE_PODS))
            reader.pods_left = 0
            continue
        reader.pods_left -= replicas
        tasks.extend(TaskSpec(pod, run_time)
                     for pod in _replicas(entry["pod"], replicas, group, namespace))
    if reader.objects([pod_group, *(t.pod for t in tasks)], body) is None:
        return None
    return Event(at, "submit", pod_group=pod_group, tasks=tuple(tasks))


def _replicas(template: dict, replicas: int, group: str, namespace: str) -> list[dict]:
    """The template's pods: names suffixed -0, -1, ... when replicated, in the PodGroup's namespace and group."""
    given = template.get("metadata")
    meta = given if isinstance(given, dict) else {}
    name = str(meta.get("name") or group)
    pods = []
    for i in range(replicas):
        pod_meta = dict(meta, name=f"{name}-{i}" if replicas > 1 else name,
                        namespace=meta.get("namespace") or namespace)
        pod_meta["annotations"] = {GROUP_NAME: group, **(meta.get("annotations") or {})}
        pods.append({**template, "apiVersion": template.get("apiVersion", "v1"), "kind": "Pod",
                     "metadata": pod_meta})
    return pods


def _delete(item: dict, at: float, reader: _TraceReader) -> Event | None:
    target = item["delete"]
    if not isinstance(target, str) or "/" not in target:
        reader.report(trace_errors.delete_target(reader.file, reader.at(item, "delete")))
        return None
    return Event(at, "delete", target=target)


def _add_node(item: dict, at: float, reader: _TraceReader) -> Event | None:
    node = item["addNode"]
    if reader.objects([node], item) is None:
        return None
    if not isinstance(node, dict) or node.get("kind") != "Node":
        reader.report(trace_errors.add_node_not_a_node(reader.file, reader.at(item, "addNode")))
        return None
    return Event(at, "addNode", node=node)


def _remove_node(item: dict, at: float, reader: _TraceReader) -> Event | None:
    target = item["removeNode"]
    if not isinstance(target, str) or not target:
        reader.report(trace_errors.remove_node_target(reader.file, reader.at(item, "removeNode")))
        return None
    return Event(at, "removeNode", target=target)


_EVENT_READERS = {"submit": _submit, "delete": _delete, "addNode": _add_node, "removeNode": _remove_node}
