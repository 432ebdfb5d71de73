"""What the node-load plugins (usage, rescheduling) read beyond requests: node utilisation,
pod limits, QoS classes and whether a pod states its priority.

Volcano's scheduler asks a metrics source (Prometheus, Elasticsearch, the custom
metrics API) for each node's average CPU and memory utilisation over a window
("10m") and keeps it, with the time it was collected, as ``NodeInfo.ResourceUsage``.
A cluster input carries the same facts in a ``metrics`` block on the Node
(``time``, ``cpu`` and ``memory``: window -> percent; docs/scenarios.md), validated
when the cluster is read.  The usage plugin also estimates a placed pod's load
from its limits (``GetPodResourceLimit``), which nothing else reads, so they are
summed only when a policy asks.
"""

from __future__ import annotations

from fractions import Fraction

from fumarole.runtime.api.model import Node, Task
from fumarole.runtime.api.quantity import QuantityError
from fumarole.runtime.api.resource import Resource
from fumarole.runtime.framework.policy_error import PolicyRuntimeError
from fumarole.runtime.k8s import podspec


def _metrics(node: Node) -> dict:
    block = node.raw.get("metrics") if isinstance(node.raw, dict) else None
    return block if isinstance(block, dict) else {}


def metrics_time(node: Node) -> float | None:
    """When the node's metrics were collected (seconds since the epoch); None when it has none."""
    from fumarole.runtime.ingest.kube_convert import parse_time  # the cluster reader's time parsing

    stamp = _metrics(node).get("time")
    return None if stamp in (None, "") else parse_time(stamp)


def cpu_usage(node: Node) -> dict[str, float]:
    """Average CPU utilisation in percent per window ("10m": 81.0)."""
    return {str(k): float(v) for k, v in (_metrics(node).get("cpu") or {}).items()}


def memory_usage(node: Node) -> dict[str, float]:
    """Average memory utilisation in percent per window."""
    return {str(k): float(v) for k, v in (_metrics(node).get("memory") or {}).items()}


def task_limit(task: Task) -> Resource:
    """The pod's limits as Volcano's GetPodResourceLimit sums them (kept for the session)."""
    from fumarole.runtime.ingest.kube_convert import pod_limit

    if "limit" not in task.derived:
        pod = task.pod if isinstance(task.pod, dict) else {}
        spec, status = pod.get("spec"), pod.get("status")
        try:
            task.derived["limit"] = pod_limit(spec if isinstance(spec, dict) else {},
                                              status if isinstance(status, dict) else None)
        except QuantityError as exc:
            raise PolicyRuntimeError(f"a limit of pod {task.key} is not a quantity: {exc}") from None
    return task.derived["limit"]


def priority_set(task: Task) -> bool:
    """The pod states spec.priority (Volcano's rescheduling puts pods without one first)."""
    spec = task.pod.get("spec") if isinstance(task.pod, dict) else None
    return isinstance(spec, dict) and spec.get("priority") is not None


_QOS_RESOURCES = ("cpu", "memory")


def qos_class(task: Task) -> str:
    """Kubernetes' GetPodQOS of the pod, worked out once per session task (numa-aware asks it per node)."""
    if "qos" not in task.derived:
        task.derived["qos"] = _qos_class(task)
    return task.derived["qos"]


def _qos_class(task: Task) -> str:
    """Kubernetes' GetPodQOS: status.qosClass when the pod reports it, else computed from its spec."""
    pod = task.pod if isinstance(task.pod, dict) else {}
    status = pod.get("status") or {}
    if isinstance(status, dict) and status.get("qosClass"):
        return str(status["qosClass"])
    return _spec_qos_class(task)


@podspec.cached_per_spec
def _spec_qos_class(task: Task) -> str:
    """GetPodQOS from the containers' (and init containers') cpu and memory requests and limits,
    once per pod spec: none at all is BestEffort; limits on both in every container, equal to the
    requests, Guaranteed; else Burstable."""
    from fumarole.runtime.api.quantity import parse_quantity

    spec = podspec.pod_spec(task)
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True
    try:
        for container in list(spec.get("containers") or []) + list(spec.get("initContainers") or []):
            resources = (container.get("resources") or {}) if isinstance(container, dict) else {}
            for name, amount in (resources.get("requests") or {}).items():
                quantity = parse_quantity(amount)
                if name in _QOS_RESOURCES and quantity > 0:
                    requests[name] = requests.get(name, Fraction(0)) + quantity
            found = set()
            for name, amount in (resources.get("limits") or {}).items():
                quantity = parse_quantity(amount)
                if name in _QOS_RESOURCES and quantity > 0:
                    found.add(name)
                    limits[name] = limits.get(name, Fraction(0)) + quantity
            guaranteed = guaranteed and found.issuperset(_QOS_RESOURCES)
    except QuantityError as exc:
        raise PolicyRuntimeError(f"a request or limit of pod {task.key} is not a quantity: {exc}") from None
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and all(limits.get(name) == amount for name, amount in requests.items()) \
            and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"
