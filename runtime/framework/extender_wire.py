"""Session objects as the JSON Volcano's extender plugin sends (``json.Marshal`` of its Go structs).

Volcano marshals its scheduler structs with their Go field names and no JSON
tags: a ``TaskInfo`` is ``{"UID", "Job", "Name", "Namespace", ..., "Pod"}``,
a ``NodeInfo`` ``{"Name", "Node", "Idle", ..., "Tasks"}``, a ``JobInfo``
``{"UID", ..., "Tasks", "PodGroup"}``, a ``QueueInfo`` ``{"UID", "Name",
"Weight", "Queue"}`` (docs/volcano-extender.md; tests/volcano_extender_example.json
is a worked example).  Each embeds the Kubernetes object it was built from, as
the session read it, which is what an extender reads most (fumarole serve's
reader, ``runtime/serve/extender_codec.py``, reads only those).  The
accounting fields (``Resreq``, ``Idle``, ``Used``...) are the session's
current values; fields fumarole does not model (``NumaInfo``, ``ImageStates``,
``LastTransaction``...) are left out.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from fumarole.runtime.api.model import Job, Node, Queue, Task
from fumarole.runtime.api.resource import Resource

# Volcano's TaskStatus bit flags (api/types.go), in their order.
_STATUS_BITS = {name: 1 << i for i, name in enumerate(
    ("Pending", "Allocated", "Pipelined", "Binding", "Bound", "Running", "Releasing", "Succeeded", "Failed",
     "Unknown"))}


def resource(r: Resource | None) -> dict[str, Any] | None:
    """``api.Resource``: millicores, bytes, scalars in milli-units (as Volcano keeps them)."""
    if r is None:
        return None
    scalars = {name: _number(value) for name, value in (r.scalars or {}).items()}
    return {"MilliCPU": _number(r.milli_cpu), "Memory": _number(r.memory),
            "ScalarResources": scalars or None, "MaxTaskNum": r.max_task_num}


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def task_info(task: Task) -> dict[str, Any]:
    pod = task.pod if isinstance(task.pod, dict) else {}
    return {
        "UID": task.uid, "Job": task.job_id, "Name": task.name, "Namespace": task.namespace,
        "TaskRole": task.role, "Resreq": resource(task.request), "InitResreq": resource(task.init_request),
        "NodeName": task.node_name, "EvictionOccurred": task.eviction_occurred,
        "Status": _STATUS_BITS.get(task.status, 0), "Priority": task.priority, "Preemptable": task.preemptable,
        "BestEffort": task.best_effort, "SchGated": task.gated, "RevocableZone": task.revocable_zone,
        "Pod": _with_node_name(pod, task.node_name) if pod else None,
        "PodAnnotations": dict(task.annotations) or None,
    }


def _with_node_name(pod: dict, node_name: str) -> dict:
    """The pod with ``spec.nodeName`` as the session has it (Volcano sets it when it allocates)."""
    spec = pod.get("spec")
    if not node_name or not isinstance(spec, dict) or spec.get("nodeName") == node_name:
        return pod
    return {**pod, "spec": {**spec, "nodeName": node_name}}


def node_info(node: Node) -> dict[str, Any]:
    return {
        "Name": node.name, "Node": node.raw,
        "Releasing": resource(node.releasing), "Pipelined": resource(node.pipelined),
        "Idle": resource(node.idle), "Used": resource(node.used),
        "Allocatable": resource(node.allocatable), "Capacity": resource(node.capacity),
        "Tasks": {key: task_info(task) for key, task in node.tasks.items()},
        "RevocableZone": node.revocable_zone,
    }


def job_info(job: Job) -> dict[str, Any]:
    meta = job.pod_group.get("metadata") if isinstance(job.pod_group, dict) else None
    return {
        "UID": job.uid, "PgUID": (meta or {}).get("uid", ""), "Name": job.name, "Namespace": job.namespace,
        "Queue": job.queue, "Priority": job.priority, "MinAvailable": job.min_available,
        "Tasks": {uid: task_info(task) for uid, task in job.tasks.items()},
        "TaskMinAvailable": dict(job.task_min_available) or None,
        "TaskMinAvailableTotal": job.task_min_available_total,
        "Allocated": resource(job.allocated), "TotalRequest": resource(job.total_request),
        "PodGroup": job.pod_group or None, "Preemptable": job.preemptable,
    }


def queue_info(queue: Queue) -> dict[str, Any]:
    return {"UID": queue.uid, "Name": queue.name, "Weight": queue.weight, "Queue": queue.raw or None}


def namespace_infos(quotas: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """``ssn.NamespaceInfo`` from the cluster's ResourceQuota objects: Volcano's cache keeps a
    namespace there once it has a quota, with each quota's status by quota name
    (``v1.ResourceQuotaStatus``: ``hard`` and ``used``, left out when empty).  Quantities are
    sent as the objects write them (the API server's are canonical already); Go's encoder
    sorts map keys, and so does this."""
    by_namespace: dict[str, dict[str, Any]] = {}
    for quota in quotas:
        meta, status = quota.get("metadata") or {}, quota.get("status") or {}
        namespace = str(meta.get("namespace") or "default")
        entry = {part: {str(name): str(amount) for name, amount in sorted(status[part].items())}
                 for part in ("hard", "used") if status.get(part)}
        by_namespace.setdefault(namespace, {})[str(meta.get("name"))] = entry
    return {namespace: {"Name": namespace, "QuotaStatus": dict(sorted(statuses.items()))}
            for namespace, statuses in sorted(by_namespace.items())}


def session_open_request(jobs: list[Job], nodes: list[Node], queues: list[Queue],
                         quotas: Iterable[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """``OnSessionOpenRequest``: the session's jobs, nodes and queues by key, its namespaces'
    quotas (``namespace_infos``), its revocable nodes."""
    return {
        "Jobs": {job.uid: job_info(job) for job in jobs},
        "Nodes": {node.name: node_info(node) for node in nodes},
        "Queues": {queue.uid: queue_info(queue) for queue in queues},
        "NamespaceInfo": namespace_infos(quotas),
        "RevocableNodes": {node.name: node_info(node) for node in nodes if node.revocable_zone},
        "NodeList": None,
    }
