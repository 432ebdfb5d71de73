"""The fields Kubernetes and Volcano define for the objects fumarole reads: misspellings get a warning.

A misspelt field is not an error in Kubernetes terms (``kubectl apply`` would
reject it, but a hand-written dump can hold it), yet it silently changes what
fumarole decides: ``namespce:`` moves a pod to ``default``, ``allocatabel:``
empties a node.  So every field of the structures the session reads is
checked against the API's own field names (Kubernetes v1.36, Volcano's
``scheduling.volcano.sh/v1beta1`` and ``topology.volcano.sh/v1alpha1``) and an
unknown one is warning K103 at its place, with a did-you-mean; ``fumarole
check --strict`` makes it an error.  Structures not listed (affinity terms,
probes, volumes...) are not fumarole's to police and are left alone.

A Queue's spec is the one place where an extra field can be meant: policies
read every field of it (``queue.spec``), so a site can try a field Volcano
has not adopted yet (``preemptable``, volcano-sh/volcano#5317).  There an
unknown field close to one of the API's (a misspelling) is still K103; any
other is warning K105, which says who reads it and stays a warning under
``--strict``.
"""

from __future__ import annotations

import difflib
from typing import Any, Iterator

from fumarole.policy_lang.diagnostics import Diagnostic, Span, did_you_mean
from fumarole.runtime.ingest.fast_checks import all_known
from fumarole.runtime.ingest import kube_errors
from fumarole.runtime.ingest.yamlpos import key_position


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


OBJECT = _names("apiVersion kind metadata spec status")
METADATA = _names("name generateName namespace uid resourceVersion generation creationTimestamp "
                  "deletionTimestamp deletionGracePeriodSeconds labels annotations ownerReferences "
                  "finalizers managedFields selfLink")
POD_SPEC = _names(
    "activeDeadlineSeconds affinity automountServiceAccountToken containers dnsConfig dnsPolicy "
    "enableServiceLinks ephemeralContainers hostAliases hostIPC hostNetwork hostPID hostUsers hostname "
    "hostnameOverride imagePullSecrets initContainers nodeName nodeSelector os overhead preemptionPolicy "
    "priority priorityClassName readinessGates resourceClaims resources restartPolicy runtimeClassName "
    "schedulerName schedulingGates securityContext serviceAccount serviceAccountName setHostnameAsFQDN "
    "shareProcessNamespace subdomain terminationGracePeriodSeconds tolerations topologySpreadConstraints "
    "volumes workloadRef")
CONTAINER = _names(
    "args command env envFrom image imagePullPolicy lifecycle livenessProbe name ports readinessProbe "
    "resizePolicy resources restartPolicy restartPolicyRules securityContext startupProbe stdin stdinOnce "
    "terminationMessagePath terminationMessagePolicy tty volumeDevices volumeMounts workingDir")
RESOURCES = _names("limits requests claims")
CONTAINER_PORT = _names("containerPort hostIP hostPort name protocol")
TOLERATION = _names("key operator value effect tolerationSeconds")
TAINT = _names("key value effect timeAdded")
POD_STATUS = _names(
    "conditions containerStatuses ephemeralContainerStatuses extendedResourceClaimStatus hostIP hostIPs "
    "initContainerStatuses message nominatedNodeName observedGeneration phase podIP podIPs qosClass reason "
    "resize resourceClaimStatuses startTime")
NODE_SPEC = _names("configSource externalID podCIDR podCIDRs providerID taints unschedulable")
NODE_STATUS = _names("addresses allocatable capacity conditions config daemonEndpoints declaredFeatures "
                     "features images nodeInfo phase runtimeHandlers volumesAttached volumesInUse")
# fumarole's own block on a Node: what Volcano's metrics source reports (NodeInfo.ResourceUsage).
NODE_METRICS = _names("time cpu memory")
POD_GROUP_SPEC = _names("minMember minTaskMember queue priorityClassName minResources networkTopology "
                        "subGroupPolicy")
POD_GROUP_STATUS = _names("phase conditions running succeeded failed")
QUEUE_SPEC = _names("weight capability reclaimable extendClusters guarantee deserved affinity type parent "
                    "priority dequeueStrategy")
QUEUE_STATUS = _names("state unknown pending running inqueue completed reservation allocated")
PRIORITY_CLASS = OBJECT | _names("value globalDefault description preemptionPolicy")
HYPER_NODE_SPEC = _names("tier tierName members")
HYPER_NODE_MEMBER = _names("type selector")
# nodeinfo.volcano.sh/v1alpha1 (Volcano's staging apis, numatopo_types.go).
NUMA_SPEC = _names("policies resReserved numares cpuDetail podAllocations")
NUMA_RESOURCE = _names("allocatable capacity")
NUMA_CPU = _names("numa socket core")
# shard.volcano.sh/v1alpha1 (Volcano's staging apis, shard/v1alpha1/types.go).
NODE_SHARD_SPEC = _names("nodesDesired")
NODE_SHARD_STATUS = _names("lastUpdateTime nodesInUse nodesToRemove nodesToAdd")

# Per kind: (path, fields) pairs; a path step "[]" means every item of a list.
SCHEMAS: dict[str, tuple[tuple[tuple[str, ...], frozenset[str]], ...]] = {
    "Pod": (((), OBJECT), (("metadata",), METADATA), (("spec",), POD_SPEC),
            (("spec", "containers", "[]"), CONTAINER), (("spec", "initContainers", "[]"), CONTAINER),
            (("spec", "containers", "[]", "resources"), RESOURCES),
            (("spec", "initContainers", "[]", "resources"), RESOURCES),
            (("spec", "containers", "[]", "ports", "[]"), CONTAINER_PORT),
            (("spec", "tolerations", "[]"), TOLERATION), (("status",), POD_STATUS)),
    "Node": (((), OBJECT | _names("metrics")), (("metadata",), METADATA), (("spec",), NODE_SPEC),
             (("metrics",), NODE_METRICS),
             (("spec", "taints", "[]"), TAINT), (("status",), NODE_STATUS)),
    "PodGroup": (((), OBJECT), (("metadata",), METADATA), (("spec",), POD_GROUP_SPEC),
                 (("status",), POD_GROUP_STATUS)),
    "Queue": (((), OBJECT), (("metadata",), METADATA), (("spec",), QUEUE_SPEC), (("status",), QUEUE_STATUS)),
    "PriorityClass": (((), PRIORITY_CLASS), (("metadata",), METADATA)),
    "HyperNode": (((), OBJECT), (("metadata",), METADATA), (("spec",), HYPER_NODE_SPEC),
                  (("spec", "members", "[]"), HYPER_NODE_MEMBER)),
    "Numatopology": (((), OBJECT - _names("status")), (("metadata",), METADATA), (("spec",), NUMA_SPEC)),
    "NodeShard": (((), OBJECT), (("metadata",), METADATA), (("spec",), NODE_SHARD_SPEC),
                  (("status",), NODE_SHARD_STATUS)),
}


_ALL_KNOWN = {kind: all_known(schema) for kind, schema in SCHEMAS.items()}
# How alike a Queue spec field must be to a known one to count as its misspelling (wieght, parnet: 0.83).
_MISSPELT = 0.8


def _owners(obj: Any, path: tuple[str, ...]) -> Iterator[dict]:
    """The mappings at ``path`` inside ``obj`` (several where the path goes through a list)."""
    if not path:
        if isinstance(obj, dict):
            yield obj
        return
    step, rest = path[0], path[1:]
    if step == "[]":
        for item in obj if isinstance(obj, list) else ():
            yield from _owners(item, rest)
    elif isinstance(obj, dict):
        yield from _owners(obj.get(step), rest)


def unknown_fields(kind: str, obj: dict, file: str) -> list[Diagnostic]:
    """Warning K103 for every field of ``obj`` its API does not define, at the field's key."""
    if kind not in _ALL_KNOWN or _ALL_KNOWN[kind](obj):
        return []
    return reported_unknown_fields(kind, obj, file)


def reported_unknown_fields(kind: str, obj: dict, file: str) -> list[Diagnostic]:
    """The walk behind :func:`unknown_fields`, for when its compiled check found something."""
    out = []
    for path, known in SCHEMAS.get(kind, ()):
        where = ".".join(step for step in path if step != "[]")
        for owner in _owners(obj, path):
            for key in owner:
                if isinstance(key, str) and key not in known:
                    line, col = key_position(owner, key)
                    field = f"{where}.{key}" if where else key
                    name = obj.get('metadata', {}).get('name', '')
                    hint = did_you_mean(key, known)
                    if kind == "Queue" and path == ("spec",) and not _misspelt(key, known):
                        out.append(kube_errors.queue_field_outside_api(file, Span(line, col), field, name, key, hint))
                    else:
                        out.append(kube_errors.unknown_field(file, Span(line, col), field, kind, name, hint))
    return out


def _misspelt(key: str, known: frozenset[str]) -> bool:
    """Whether ``key`` is most likely a misspelling of one of ``known``."""
    return bool(difflib.get_close_matches(key, sorted(known), n=1, cutoff=_MISSPELT))
