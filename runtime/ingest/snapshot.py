"""A cluster dump read from a live cluster: "my cluster now" in one command.

``fumarole snapshot`` and ``fumarole run --kubeconfig`` list the objects a
session reads -- nodes, pods, PriorityClasses, and Volcano's PodGroups,
Queues and HyperNodes -- and get the scheduler's ConfigMap, with the official
Kubernetes Python client and read-only verbs only (list, get).  The objects
come back exactly as ``kubectl get -o yaml`` would print them (apiVersion and
kind set on every item; ``managedFields`` dropped), so the dump is an ordinary
cluster file: it can be kept, edited, diffed and run again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fumarole.policy_lang.diagnostics import NO_POSITION, Diagnostic, FumaroleError
from fumarole.runtime.api.extras import require_extra

# (apiVersion, kind, plural) of every kind a session reads; core kinds have no group.
KINDS = (
    ("v1", "Node", "nodes"),
    ("v1", "Pod", "pods"),
    ("scheduling.k8s.io/v1", "PriorityClass", "priorityclasses"),
    ("scheduling.volcano.sh/v1beta1", "Queue", "queues"),
    ("scheduling.volcano.sh/v1beta1", "PodGroup", "podgroups"),
    ("topology.volcano.sh/v1alpha1", "HyperNode", "hypernodes"),
)
DEFAULT_CONFIGMAP = "volcano-system/volcano-scheduler-configmap"
CONF_KEY = "volcano-scheduler.conf"


@dataclass(frozen=True)
class Snapshot:
    """The objects, as one ``kind: List``, and the scheduler configuration if the ConfigMap has one."""

    objects: dict[str, Any]
    scheduler_conf: str | None


def take(kubeconfig: str, context: str | None = None, configmap: str = DEFAULT_CONFIGMAP) -> Snapshot:
    """Read the cluster ``kubeconfig`` (and ``context``) points at; FumaroleError (F005) when it cannot."""
    import logging

    require_extra("kube", "reading a live cluster")
    from kubernetes import client, config
    from kubernetes.client.exceptions import ApiException
    from kubernetes.config.config_exception import ConfigException
    from urllib3.exceptions import HTTPError

    logging.getLogger("urllib3").setLevel(logging.ERROR)  # its retry warnings are not the user's business
    try:
        settings = client.Configuration()
        config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=settings)
        settings.retries = 1  # a cluster that is not there should be said at once, not after back-offs
        api = client.ApiClient(settings)
    except (ConfigException, OSError, ValueError, TypeError) as exc:
        raise _error(kubeconfig, f"cannot use the kubeconfig: {exc}") from None
    items: list[dict] = []
    try:
        for api_version, kind, plural in KINDS:
            items += [_as_dumped(item, api_version, kind) for item in _list(api, client, api_version, plural)]
        conf = _scheduler_conf(client.CoreV1Api(api), configmap, ApiException)
    except ApiException as exc:
        raise _error(kubeconfig, f"the API server answered {exc.status} {exc.reason}") from None
    except (OSError, HTTPError) as exc:  # connection refused, DNS, TLS
        reason = getattr(exc, "reason", None) or exc
        raise _error(kubeconfig, f"cannot reach the API server {api.configuration.host}: {reason}") from None
    finally:
        api.close()
    return Snapshot({"apiVersion": "v1", "kind": "List", "items": items}, conf)


def _list(api: Any, client: Any, api_version: str, plural: str) -> list[dict]:
    """Every object of one kind in all namespaces (an absent Volcano CRD is no objects, not an error)."""
    from kubernetes.client.exceptions import ApiException

    if "/" not in api_version:
        core = client.CoreV1Api(api)
        found = core.list_node() if plural == "nodes" else core.list_pod_for_all_namespaces()
        return api.sanitize_for_serialization(found).get("items") or []
    group, version = api_version.split("/")
    if group == "scheduling.k8s.io":
        return api.sanitize_for_serialization(client.SchedulingV1Api(api).list_priority_class()).get("items") or []
    try:
        listed = client.CustomObjectsApi(api).list_cluster_custom_object(group, version, plural)
    except ApiException as exc:
        if exc.status == 404:  # the CRD is not installed (a cluster without HyperNodes)
            return []
        raise
    return listed.get("items") or []


def _as_dumped(item: dict, api_version: str, kind: str) -> dict:
    """An item of a list response as ``kubectl get -o yaml`` prints the object."""
    metadata = {k: v for k, v in (item.get("metadata") or {}).items() if k != "managedFields"}
    rest = {k: v for k, v in item.items() if k not in ("apiVersion", "kind", "metadata")}
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata, **rest}


def _scheduler_conf(core: Any, configmap: str, api_exception: type) -> str | None:
    namespace, _, name = configmap.partition("/")
    try:
        found = core.read_namespaced_config_map(name, namespace)
    except api_exception as exc:
        if exc.status in (403, 404):  # not there, or not ours to read: Volcano's defaults apply
            return None
        raise
    return (found.data or {}).get(CONF_KEY)


def _error(kubeconfig: str, message: str) -> FumaroleError:
    return FumaroleError([Diagnostic("F005", message, kubeconfig, NO_POSITION)])
