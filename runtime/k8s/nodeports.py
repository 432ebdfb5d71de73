"""Kubernetes' ``nodeports`` plugin: a pod's host ports must be free on the node."""

from __future__ import annotations

from fumarole.runtime.api.model import Node, Task
from fumarole.runtime.k8s.podspec import cached_per_spec, list_at, pod_spec


@cached_per_spec
def _host_ports(task: Task) -> list[tuple[str, str, int]]:
    """(hostIP, protocol, hostPort) of containers and sidecar init containers, with defaults."""
    spec = pod_spec(task)
    containers = [c for c in list_at(spec, "initContainers") if c.get("restartPolicy") == "Always"]
    containers += list_at(spec, "containers")
    ports = []
    for container in containers:
        for port in list_at(container, "ports"):
            number = int(port.get("hostPort") or 0)
            if number > 0:
                ports.append((str(port.get("hostIP") or "0.0.0.0"), str(port.get("protocol") or "TCP"), number))
    return ports


def wanted_host_ports(task: Task) -> list[tuple[str, str, int]]:
    """The host ports the pod binds (none: the NodePorts filter passes every node)."""
    return _host_ports(task)


def host_port_conflict(task: Task, node: Node) -> bool:
    """NodePorts filter: a wanted host port is already bound on the node.

    Two bindings clash on the same port and protocol when their IPs are equal
    or either is the wildcard 0.0.0.0.
    """
    wanted = _host_ports(task)
    if not wanted:
        return False
    used = [port for key, other in node.view_pods.items() if key != task.key for port in _host_ports(other)]
    for ip, protocol, number in wanted:
        for used_ip, used_protocol, used_number in used:
            if (number == used_number and protocol == used_protocol
                    and (ip == used_ip or "0.0.0.0" in (ip, used_ip))):
                return True
    return False
