"""Volcano's extender payloads (Go scheduler structs as JSON) back to Kubernetes objects.

Volcano sends its internal ``TaskInfo`` / ``NodeInfo`` / ``JobInfo`` /
``QueueInfo`` structs with Go field names (``"UID"``, ``"Pod"``, ``"Tasks"``;
docs/volcano-extender.md).  Each of them embeds the Kubernetes object it was
built from (``Pod``, ``Node``, ``PodGroup``, ``Queue``), so rather than a
second model, the codec recovers those objects and lets ``kube_convert.py``
build fumarole's model from them exactly as ``fumarole run`` does.  The same pod
appears many times in one payload (a JobInfo holds each task four times), so
objects are collected by identity.
"""

from __future__ import annotations

from typing import Any, Iterable


class PayloadError(ValueError):
    """The request body does not have the shape of the Volcano struct it should be."""


def field(obj: Any, key: str, kind: type, what: str, optional: bool = False) -> Any:
    """``obj[key]`` checked to be a ``kind``; Go's ``null`` for maps and slices reads as empty."""
    if not isinstance(obj, dict):
        raise PayloadError(f"{what} must be a JSON object")
    value = obj.get(key)
    if value is None and (optional or kind in (dict, list)):
        return kind() if kind in (dict, list) else None
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise PayloadError(f"{what}.{key} must be a {kind.__name__}")
    return value


def _with_kind(obj: dict, kind: str, what: str) -> dict:
    """Informer objects carry no kind/apiVersion; fumarole's reader wants the kind."""
    meta = field(obj, "metadata", dict, what)
    if not meta.get("name"):
        raise PayloadError(f"{what}.metadata.name is missing")
    return {**obj, "kind": kind}


def task_pod(task: Any, what: str = "task") -> dict:
    """The v1.Pod inside a TaskInfo, with the TaskInfo's UID as its uid if the pod has none."""
    pod = _with_kind(field(task, "Pod", dict, what), "Pod", f"{what}.Pod")
    uid = field(task, "UID", str, what)
    meta = pod["metadata"]
    if not meta.get("uid"):
        pod["metadata"] = {**meta, "uid": uid}
    return pod


def node_object(node: Any, what: str = "node") -> dict:
    return _with_kind(field(node, "Node", dict, what), "Node", f"{what}.Node")


def node_pods(node: Any, what: str = "node") -> list[dict]:
    """The pods of the tasks Volcano has placed on a node (``NodeInfo.Tasks``)."""
    return [task_pod(t, f"{what}.Tasks[{k}]") for k, t in field(node, "Tasks", dict, what).items()]


def queue_object(queue: Any, what: str = "queue") -> dict:
    return _with_kind(field(queue, "Queue", dict, what), "Queue", f"{what}.Queue")


def job_pod_group(job: Any, what: str = "job") -> dict:
    """The PodGroup of a JobInfo, without the ``Version`` the Go wrapper adds."""
    pg = _with_kind(field(job, "PodGroup", dict, what), "PodGroup", f"{what}.PodGroup")
    pg.pop("Version", None)
    return pg


def job_pods(job: Any, what: str = "job") -> list[dict]:
    return [task_pod(t, f"{what}.Tasks[{k}]") for k, t in field(job, "Tasks", dict, what).items()]


def job_priority(job: Any, what: str = "job") -> int:
    """The priority Volcano resolved from the PriorityClass (classes themselves are not sent)."""
    return int(field(job, "Priority", int, what, optional=True) or 0)


def unique(objects: Iterable[dict]) -> list[dict]:
    """One object per kind and namespace/name, the first one seen."""
    seen: dict[tuple[str, str, str], dict] = {}
    for obj in objects:
        meta = obj["metadata"]
        seen.setdefault((obj["kind"], str(meta.get("namespace") or ""), str(meta["name"])), obj)
    return list(seen.values())


def session_objects(request: Any) -> tuple[list[dict], dict[str, int]]:
    """All objects of an ``OnSessionOpenRequest`` and the resolved priority of each job."""
    objects: list[dict] = []
    priorities: dict[str, int] = {}
    for key, job in field(request, "Jobs", dict, "request").items():
        what = f"Jobs[{key}]"
        objects.append(job_pod_group(job, what))
        objects += job_pods(job, what)
        priorities[field(job, "UID", str, what)] = job_priority(job, what)
    for key, node in field(request, "Nodes", dict, "request").items():
        objects.append(node_object(node, f"Nodes[{key}]"))
        objects += node_pods(node, f"Nodes[{key}]")
    for key, queue in field(request, "Queues", dict, "request").items():
        objects.append(queue_object(queue, f"Queues[{key}]"))
    return unique(objects), priorities
