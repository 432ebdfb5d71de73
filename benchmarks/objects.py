"""Kubernetes objects as fumarole's cluster generators write them (the benchmark shapes,
``synthetic.py`` and the tests' differential clusters): one builder per kind, so every
generator spells a gang's pod and a queue alike."""

from __future__ import annotations


def container(cpu: int | str, memory: str, name: str = "main", image: str = "work:1") -> dict:
    """A container requesting ``cpu`` CPUs and ``memory``."""
    return {"name": name, "image": image, "resources": {"requests": {"cpu": str(cpu), "memory": memory}}}


def gang_pod(name: str, namespace: str, uid: str, group: str, spec: dict, labels: dict | None = None,
             created: str | None = None) -> dict:
    """A Pending pod of the PodGroup ``group`` (:func:`run_on` places it)."""
    metadata: dict = {"name": name, "namespace": namespace, "uid": uid}
    if labels is not None:
        metadata["labels"] = labels
    metadata["annotations"] = {"scheduling.k8s.io/group-name": group}
    if created is not None:
        metadata["creationTimestamp"] = created
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": {"phase": "Pending"}}


def run_on(pod: dict, node: str, started: str | None = None) -> dict:
    """``pod`` Running on ``node`` (with a status.startTime when ``started`` is given)."""
    pod["spec"]["nodeName"] = node
    pod["status"]["phase"] = "Running"
    if started is not None:
        pod["status"]["startTime"] = started
    return pod


def queue_object(name: str, spec: dict) -> dict:
    """An Open queue."""
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
            "spec": spec, "status": {"state": "Open"}}
