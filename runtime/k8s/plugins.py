"""The Kubernetes scheduler plugins Volcano's predicates and nodeorder plugins wrap.

Volcano does not re-implement node affinity, taints, host ports, inter-pod
affinity or topology spreading: it calls the Kubernetes v1.36 framework plugins
against its own "k8s view" of each node (``Node.view_pods``).  The policies do the
same through this module, so every rule here follows the Kubernetes plugin
behaviour, quirks included (an empty required node-selector term matches
nothing, an empty spread selector counts no pods, InterPodAffinity normalises
with min-max...).

Two layers:

* module functions are stateless: they look at one task and one node;
* :class:`K8sView` is built once per session with the session's node list and
  answers questions that need every pod of the cluster (inter-pod affinity,
  topology spreading).  It reads ``node.view_pods`` on every call because the
  view changes while the session allocates, pipelines and evicts.

Namespaces: the scheduler sees no Namespace objects (neither does Volcano's
unit-test harness), so a namespace label set is always empty.  Consequently a
non-empty ``namespaceSelector`` in the incoming pod's own affinity terms selects
no namespace (Kubernetes lists the matching Namespace objects, of which there
are none), while one in an existing pod's term is evaluated against the
incoming pod's (empty) namespace labels, exactly as Kubernetes does.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping

import orjson

from fumarole.runtime.api.labels import Requirement, parse_selector, selects
from fumarole.runtime.api.model import Node, Task
from fumarole.runtime.api.resource import Resource
from fumarole.runtime.ingest.kube import parse_time

DEFAULT_MILLI_CPU = 100.0  # schedutil.DefaultMilliCPURequest
DEFAULT_MEMORY = 200.0 * 1024 * 1024  # schedutil.DefaultMemoryRequest
HARD_POD_AFFINITY_WEIGHT = 1  # InterPodAffinityArgs default, as Volcano configures it
MAX_NODE_SCORE = 100
HOSTNAME_LABEL = "kubernetes.io/hostname"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
DO_NOT_SCHEDULE_EFFECTS = ("NoSchedule", "NoExecute")

EXISTING_ANTI_AFFINITY_FAILURE = "node(s) didn't satisfy existing pods anti-affinity rules"
AFFINITY_FAILURE = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY_FAILURE = "node(s) didn't match pod anti-affinity rules"
SPREAD_FAILURE = "node(s) didn't match pod topology spread constraints"
SPREAD_LABEL_FAILURE = SPREAD_FAILURE + " (missing required label)"
# The reasons Kubernetes reports as UnschedulableAndUnresolvable: evicting pods cannot fix them.
UNRESOLVABLE_REASONS = frozenset({AFFINITY_FAILURE, SPREAD_LABEL_FAILURE})

_IMAGE_MB = 1024 * 1024
_IMAGE_MIN_THRESHOLD = 23 * _IMAGE_MB
_IMAGE_MAX_CONTAINER_THRESHOLD = 1000 * _IMAGE_MB
_GO_INT = re.compile(r"[+-]?[0-9]+")

# A label selector: None selects nothing (labels.Nothing), [] selects everything
# (labels.Everything), otherwise the AND of (key, operator, values) requirements.


def _memo(fn):
    """Cache a function of a pod's spec on its task: pods do not change within a session,
    and the filters and scorers ask the same questions for every node."""
    name = fn.__name__

    @functools.wraps(fn)
    def cached(task, *args):
        key = (name, args)
        derived = task.derived
        if key in derived:
            return derived[key]
        value = derived[key] = fn(task, *args)
        return value
    return cached


# Pod specs as canonical text (spec_identity), and the facts of each spec: shared by every pod
# with that spec, in this session and the next (they are functions of the text alone).
_IDENTITY = ("spec_identity",)
_FACTS = ("spec_facts",)
_FACTS_BY_SPEC: dict[bytes | str, dict] = {}
_FACTS_KEPT = 4096


def canonical_text(value: object) -> bytes | str:
    """A JSON value as canonical text (keys sorted): equal texts, equal values."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str)
    except (TypeError, orjson.JSONEncodeError):  # integers beyond 64 bits, keys of several types
        return json.dumps(value, sort_keys=True, default=str)


def spec_identity(task: Task) -> bytes | str:
    """The pod's spec as canonical text, without ``nodeName`` (where a pod runs, not what it
    asks for: no filter or scorer reads it from the spec).  The pods of a job share one."""
    derived = task.derived
    identity = derived.get(_IDENTITY)
    if identity is None:
        spec = _spec(task)
        if "nodeName" in spec:
            spec = {k: v for k, v in spec.items() if k != "nodeName"}
        identity = derived[_IDENTITY] = canonical_text(spec)
    return identity


def _spec_fact(fn):
    """Cache a function of the pod spec alone (it reads nothing else of the task) per distinct
    spec: thousands of pods of a few jobs ask the same questions once."""
    name = fn.__name__

    @functools.wraps(fn)
    def cached(task):
        derived = task.derived
        facts = derived.get(_FACTS)
        if facts is None:
            identity = spec_identity(task)
            facts = _FACTS_BY_SPEC.get(identity)
            if facts is None:
                if len(_FACTS_BY_SPEC) >= _FACTS_KEPT:
                    _FACTS_BY_SPEC.clear()
                facts = _FACTS_BY_SPEC[identity] = {}
            derived[_FACTS] = facts
        if name in facts:
            return facts[name]
        value = facts[name] = fn(task)
        return value
    return cached


# -- pod spec access ----------------------------------------------------------

def _mapping(obj: Any, key: str) -> dict:
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, dict) else {}


def _list(obj: Any, key: str) -> list:
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, list) else []


def _spec(task: Task) -> dict:
    return _mapping(task.pod, "spec")


def _affinity(task: Task, kind: str) -> dict | None:
    """spec.affinity.<kind> (nodeAffinity, podAffinity, podAntiAffinity), None when absent."""
    value = _mapping(_spec(task), "affinity").get(kind)
    return value if isinstance(value, dict) else None


def _terminating(task: Task) -> bool:
    return bool(_mapping(task.pod, "metadata").get("deletionTimestamp"))


def terminating_by_preemption(task: Task) -> bool:
    """Deleted, with a true DisruptionTarget condition whose reason is PreemptionByScheduler.

    Only the first DisruptionTarget condition counts, as in Volcano's
    ``podTerminatingByPreemption``.
    """
    if not _terminating(task):
        return False
    for condition in _list(_mapping(task.pod, "status"), "conditions"):
        if isinstance(condition, dict) and condition.get("type") == "DisruptionTarget":
            return condition.get("status") == "True" and condition.get("reason") == "PreemptionByScheduler"
    return False


def has_start_time(task: Task) -> bool:
    """status.startTime is set (Volcano's preemption counts a pod without one as starting now)."""
    return bool(_mapping(task.pod, "status").get("startTime"))


GO_ZERO_TIME = -62135596800.0  # Go's zero time.Time (0001-01-01 UTC), seconds since the epoch


def pod_phase(task: Task) -> str:
    """status.phase as the pod reports it ("" when unset)."""
    return str(_mapping(task.pod, "status").get("phase") or "")


def pod_scheduled_since(task: Task) -> float | None:
    """When the pod's first PodScheduled condition turned True, or None when that condition is
    missing or not True (a condition without lastTransitionTime turned True at Go's zero time)."""
    for condition in _list(_mapping(task.pod, "status"), "conditions"):
        if isinstance(condition, dict) and condition.get("type") == "PodScheduled":
            if condition.get("status") != "True":
                return None
            since = condition.get("lastTransitionTime")
            return parse_time(since) if since else GO_ZERO_TIME
    return None


QUEUE_ALLOCATION_GATE = "scheduling.volcano.sh/queue-allocation-gate"


def only_queue_allocation_gate(task: Task) -> bool:
    """The pod's one scheduling gate is Volcano's queue-allocation gate (HasOnlyVolcanoSchedulingGate).

    Volcano removes that gate itself once the queue has room, so allocate still
    considers such a pod and enqueue's quota plugins count it as inqueue.
    """
    gates = _list(_mapping(task.pod, "spec"), "schedulingGates")
    return len(gates) == 1 and isinstance(gates[0], dict) and gates[0].get("name") == QUEUE_ALLOCATION_GATE


def _parse_go_int(text: object) -> int | None:
    """strconv.ParseInt(text, 10, 64): optional sign, decimal digits, int64 range."""
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        return None
    text = str(text)
    if not _GO_INT.fullmatch(text):
        return None
    number = int(text)
    return number if -2**63 <= number < 2**63 else None


def _go_round(x: float) -> int:
    """Go's math.Round: half away from zero (Python's round() is half to even)."""
    whole = math.trunc(x)
    if abs(x - whole) >= 0.5:
        whole += 1 if x > 0 else -1
    return int(whole)


# -- resources ----------------------------------------------------------------

def _container_nonzero(container: dict) -> Resource:
    """A container's cpu/memory request, with the defaults for a request that is absent.

    Only a missing key gets the default: an explicit ``cpu: 0`` stays 0, as in
    Kubernetes' ``NonMissingContainerRequests``.
    """
    requests = _mapping(_mapping(container, "resources"), "requests")
    parsed = Resource.from_list({k: v for k, v in requests.items() if k in ("cpu", "memory")})
    return Resource(parsed.milli_cpu if "cpu" in requests else DEFAULT_MILLI_CPU,
                    parsed.memory if "memory" in requests else DEFAULT_MEMORY)


@_spec_fact
def nonzero_request(task: Task) -> Resource:
    """The pod's cpu/memory request as the k8s resource scorers see it.

    LeastAllocated / MostAllocated must not treat request-less pods as free, so
    every container (init containers included) without a cpu or memory request
    counts 100m / 200Mi.  Aggregation follows the Kubernetes pod request:
    containers and restartable (sidecar) init containers add up, each ordinary
    init container runs alongside the sidecars started before it, the pod needs
    the larger of the two, plus the pod overhead.
    """
    spec = _spec(task)
    total = Resource()
    for container in _list(spec, "containers"):
        total.add(_container_nonzero(container))
    sidecars, peak = Resource(), Resource()
    for container in _list(spec, "initContainers"):
        request = _container_nonzero(container)
        if container.get("restartPolicy") == "Always":
            total.add(request)
            sidecars.add(request)
            peak.set_max(sidecars)
        else:
            peak.set_max(request.add(sidecars))
    total.set_max(peak)
    overhead = Resource.from_list(_mapping(spec, "overhead"))
    return Resource(total.milli_cpu + overhead.milli_cpu, total.memory + overhead.memory)


def view_requested(node: Node) -> Resource:
    """Sum of the requests of the pods in the node's k8s view (cached until the view changes)."""
    total = node.view_cache.get("requested")
    if total is None:
        total = node.view_cache["requested"] = Resource()
        for task in node.view_pods.values():
            total.add(task.request)
    return total


def view_nonzero_requested(node: Node) -> Resource:
    """As :func:`view_requested`, with the non-zero defaults (k8s NodeInfo.NonZeroRequested)."""
    total = node.view_cache.get("nonzero")
    if total is None:
        total = node.view_cache["nonzero"] = Resource()
        for task in node.view_pods.values():
            total.add(nonzero_request(task))
    return total


def view_appended(node: Node, task: Task) -> None:
    """The task joined the end of the node's view: the sums kept so far take its requests last,
    the same additions in the same order as summing the whole view again."""
    cache = node.view_cache
    requested, nonzero = cache.get("requested"), cache.get("nonzero")
    cache.clear()
    if requested is not None:
        cache["requested"] = requested.clone().add(task.request)
    if nonzero is not None:
        cache["nonzero"] = nonzero.clone().add(nonzero_request(task))


# -- node selectors -----------------------------------------------------------

def _node_requirement(expr: dict, labels: dict) -> bool:
    """One nodeSelectorRequirement against node labels.

    Requirements Kubernetes refuses to parse (In/NotIn without values, Exists
    with values, Gt/Lt without exactly one integer) make the whole term fail,
    which inside an AND is the same as this requirement failing.
    """
    key, op = expr.get("key"), expr.get("operator")
    values = [str(v) for v in expr.get("values") or []]
    if op in ("In", "NotIn"):
        if not values:
            return False
        present = key in labels and str(labels[key]) in values
        return present if op == "In" else not present
    if op in ("Exists", "DoesNotExist"):
        if values:
            return False
        return (key in labels) == (op == "Exists")
    if op in ("Gt", "Lt"):
        bound = _parse_go_int(values[0]) if len(values) == 1 else None
        actual = _parse_go_int(labels[key]) if key in labels else None
        if bound is None or actual is None:
            return False
        return actual > bound if op == "Gt" else actual < bound
    return False


def _field_requirement(expr: dict, node: Node) -> bool:
    """One matchFields requirement: only In / NotIn with exactly one value parse."""
    values = expr.get("values") or []
    if expr.get("operator") not in ("In", "NotIn") or len(values) != 1:
        return False
    actual = node.name if expr.get("key") == "metadata.name" else ""
    equal = actual == str(values[0])
    return equal if expr.get("operator") == "In" else not equal


def _is_empty_term(term: dict) -> bool:
    return not _list(term, "matchExpressions") and not _list(term, "matchFields")


def _term_matches(term: dict, node: Node) -> bool:
    """A node selector term: the AND of its label expressions and field requirements."""
    labels = node.labels
    return (all(_node_requirement(e, labels) for e in _list(term, "matchExpressions"))
            and all(_field_requirement(f, node) for f in _list(term, "matchFields")))


@_spec_fact
def _required_node_affinity(task: Task) -> dict | None:
    node_affinity = _affinity(task, "nodeAffinity")
    if node_affinity is None:
        return None
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    return required if isinstance(required, dict) else None


@_spec_fact
def has_node_selection(task: Task) -> bool:
    """Whether the NodeAffinity filter has anything to check (its PreFilter does not Skip)."""
    return _spec(task).get("nodeSelector") is not None or _required_node_affinity(task) is not None


@_spec_fact
def node_selection_text(task: Task) -> bytes | str:
    """What :func:`matches_node_selector_and_affinity` reads of the pod, as canonical text: pods
    with equal texts get the same answer on every node."""
    return canonical_text([_mapping(_spec(task), "nodeSelector"), _required_node_affinity(task)])


def has_required_pod_terms(task: Task) -> bool:
    """Required pod affinity or anti-affinity terms of the pod's own (without: only placed pods'
    anti-affinity can refuse it)."""
    return bool(_required_terms(task, "podAffinity", True) or _required_terms(task, "podAntiAffinity", True))


def has_hard_spread_constraints(task: Task) -> bool:
    """Any DoNotSchedule topology spread constraint (none: the filter passes every node)."""
    return bool(_spread_constraints(task, "DoNotSchedule"))


def matches_node_selector_and_affinity(task: Task, node: Node) -> bool:
    """nodeSelector (every label equal) AND required node affinity (OR over non-empty terms)."""
    labels = node.labels
    for key, value in _mapping(_spec(task), "nodeSelector").items():
        if key not in labels or str(labels[key]) != str(value):
            return False
    required = _required_node_affinity(task)
    if required is None:
        return True
    return any(_term_matches(term, node) for term in _list(required, "nodeSelectorTerms")
               if isinstance(term, dict) and not _is_empty_term(term))


def node_affinity_conflict(task: Task) -> bool:
    """The NodeAffinity PreFilter's "conflicting affinity to node names" failure.

    Every required term must pin ``metadata.name In`` (the names of one term
    intersect, terms union); if they all do and the union is empty, no node can
    ever match.  A term without such a requirement leaves every node eligible.
    """
    required = _required_node_affinity(task)
    if required is None:
        return False
    terms = _list(required, "nodeSelectorTerms")
    if not terms:
        return False
    union: set[str] = set()
    for term in terms:
        names: set[str] | None = None
        for expr in _list(term, "matchFields"):
            if expr.get("key") == "metadata.name" and expr.get("operator") == "In":
                values = {str(v) for v in expr.get("values") or []}
                names = values if names is None else names & values
        if names is None:
            return False
        union |= names
    return not union


def _preferred_node_terms(task: Task) -> list:
    node_affinity = _affinity(task, "nodeAffinity")
    if node_affinity is None:
        return []
    return _list(node_affinity, "preferredDuringSchedulingIgnoredDuringExecution")


def has_preferred_node_affinity(task: Task) -> bool:
    """Whether the NodeAffinity scorer runs (its PreScore skips pods without preferred terms)."""
    return bool(_preferred_node_terms(task))


def preferred_node_affinity_score(task: Task, node: Node) -> int:
    """Sum of weights of the preferred terms matching the node (zero-weight and empty terms ignored)."""
    score = 0
    for term in _preferred_node_terms(task):
        weight = int(term.get("weight") or 0) if isinstance(term, dict) else 0
        preference = _mapping(term, "preference")
        if weight and not _is_empty_term(preference) and _term_matches(preference, node):
            score += weight
    return score


# -- taints and tolerations ---------------------------------------------------

def _tolerates(toleration: dict, taint: dict) -> bool:
    """Kubernetes Toleration.ToleratesTaint (an empty operator means Equal)."""
    effect, key = toleration.get("effect") or "", toleration.get("key") or ""
    if effect and effect != (taint.get("effect") or ""):
        return False
    if key and key != (taint.get("key") or ""):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        return str(toleration.get("value") or "") == str(taint.get("value") or "")
    return False


@_spec_fact
def _tolerations(task: Task) -> list[dict]:
    return [t for t in _list(_spec(task), "tolerations") if isinstance(t, dict)]


def tolerations_of(task: Task) -> list[dict]:
    """What the taint filters and scores read of the pod: pods with equal tolerations get the
    same answer on every node."""
    return _tolerations(task)


@_spec_fact
def tolerations_text(task: Task) -> bytes | str:
    """:func:`tolerations_of` as canonical text (a key for answers per distinct tolerations)."""
    return canonical_text(_tolerations(task))


def _tolerated(tolerations: Iterable[dict], taint: dict) -> bool:
    return any(_tolerates(t, taint) for t in tolerations)


def _describe_taint(taint: dict) -> str:
    key, value, effect = taint.get("key") or "", taint.get("value") or "", taint.get("effect") or ""
    return f"{key}={value}:{effect}" if value else f"{key}:{effect}"


def untolerated_taint(task: Task, node: Node, effects: list[str]) -> str | None:
    """The first taint with one of ``effects`` that no toleration of the pod tolerates."""
    tolerations = _tolerations(task)
    for taint in node.taints:
        if isinstance(taint, dict) and taint.get("effect") in effects and not _tolerated(tolerations, taint):
            return _describe_taint(taint)
    return None


def tolerates_unschedulable(task: Task) -> bool:
    """Whether the pod may go to a cordoned node (NodeUnschedulable filter)."""
    taint = {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}
    return _tolerated(_tolerations(task), taint)


def intolerable_prefer_no_schedule(task: Task, node: Node) -> int:
    """TaintToleration's raw score: PreferNoSchedule taints not tolerated.

    Only tolerations whose effect is empty or PreferNoSchedule count, so a
    NoSchedule toleration does not soften a PreferNoSchedule taint.
    """
    tolerations = [t for t in _tolerations(task) if (t.get("effect") or "") in ("", "PreferNoSchedule")]
    return sum(1 for taint in node.taints
               if isinstance(taint, dict) and taint.get("effect") == "PreferNoSchedule"
               and not _tolerated(tolerations, taint))


# -- host ports ---------------------------------------------------------------

@_spec_fact
def _host_ports(task: Task) -> list[tuple[str, str, int]]:
    """(hostIP, protocol, hostPort) of containers and sidecar init containers, with defaults."""
    spec = _spec(task)
    containers = [c for c in _list(spec, "initContainers") if c.get("restartPolicy") == "Always"]
    containers += _list(spec, "containers")
    ports = []
    for container in containers:
        for port in _list(container, "ports"):
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


# -- image locality -----------------------------------------------------------

def _node_image_sizes(node: Node) -> dict[str, int]:
    """Image name -> size from node.status.images (every alias of an image has its size)."""
    sizes = {}
    for image in _list(_mapping(node.raw, "status"), "images"):
        for name in _list(image, "names"):
            sizes[str(name)] = int(image.get("sizeBytes") or 0)
    return sizes


def _normalized_image(name: str) -> str:
    """A pod image without a tag means ``:latest``, as in the node's image list."""
    return name if name.rfind(":") > name.rfind("/") else name + ":latest"


@_spec_fact
def _pod_images(task: Task) -> tuple[str, ...]:
    """The normalised image of every container, init containers first."""
    spec = _spec(task)
    return tuple(_normalized_image(str(c.get("image") or ""))
                 for c in _list(spec, "initContainers") + _list(spec, "containers"))


def image_locality_score(task: Task, node: Node, total_nodes: int = 1,
                         nodes_with_image: dict[str, int] | None = None) -> int:
    """ImageLocality raw score in [0, 100].

    Each pod image already on the node counts its size scaled by the fraction of
    nodes holding it (so an image present everywhere does not attract pods to
    one node); the sum is clamped to [23MB, 1000MB * containers] and mapped
    linearly to [0, 100].  Without ``nodes_with_image`` an image counts as held
    by one node.
    """
    images = _pod_images(task)
    sizes = _node_image_sizes(node)
    total = 0
    for name in images:
        if name in sizes:
            holders = (nodes_with_image or {}).get(name, 1)
            total += int(sizes[name] * (holders / total_nodes))
    max_threshold = _IMAGE_MAX_CONTAINER_THRESHOLD * len(images)
    if total < _IMAGE_MIN_THRESHOLD:
        total = _IMAGE_MIN_THRESHOLD
    elif total > max_threshold:
        total = max_threshold
    return MAX_NODE_SCORE * (total - _IMAGE_MIN_THRESHOLD) // (max_threshold - _IMAGE_MIN_THRESHOLD)


# The resources Volcano's nodeorder plugin gives NodeResourcesBalancedAllocation.
BALANCED_RESOURCES = ("cpu", "memory", "nvidia.com/gpu")
_GPU = BALANCED_RESOURCES[2]


def _balance(cpu: float, memory: float, gpu: float | None, allocatable: Resource) -> int:
    """How evenly requests of ``cpu``, ``memory`` and ``gpu`` fill ``allocatable``: 100 minus 100
    times the spread of the fractions.

    A resource the node does not have is left out, and so is the extended
    resource when the pod does not ask for it (``gpu`` None).  With two
    fractions the spread is half their difference, with more their population
    standard deviation.  Scores every node a task is weighed against, so the
    resources are spelled out rather than looked up by name.
    """
    fractions = []
    if allocatable.milli_cpu != 0:
        fractions.append(min(cpu / allocatable.milli_cpu, 1.0))
    if allocatable.memory != 0:
        fractions.append(min(memory / allocatable.memory, 1.0))
    if gpu is not None:
        capacity = allocatable.get(_GPU)
        if capacity != 0:
            fractions.append(min(gpu / capacity, 1.0))
    spread = 0.0
    if len(fractions) == 2:
        spread = abs(fractions[0] - fractions[1]) / 2
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        spread = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
    return int((1 - spread) * MAX_NODE_SCORE)


def balanced_allocation_score(task: Task, node: Node) -> int:
    """NodeResourcesBalancedAllocation as Kubernetes v1.36 scores it, in [50, 100].

    Since v1.36 the score rewards the change of balance that placing the pod
    brings, not the balance after placement alone: no change scores 75, going
    from perfectly balanced to fully unbalanced 50, the reverse 100.  Requests
    are the actual ones (no non-zero defaults).  A pod requesting none of the
    resources is skipped (scores 0), as the scorer's PreScore does.
    """
    pod = task.request
    pod_gpu = pod.get(_GPU)
    if pod.milli_cpu == 0 and pod.memory == 0 and pod_gpu == 0:
        return 0
    before = view_requested(node)
    gpu = None if pod_gpu == 0 else before.get(_GPU)
    with_pod = _balance(before.milli_cpu + pod.milli_cpu, before.memory + pod.memory,
                        None if gpu is None else gpu + pod_gpu, node.allocatable)
    without_pod = _balance(before.milli_cpu, before.memory, gpu, node.allocatable)
    # Go's integer division; the dividend is never negative (both scores lie in [50, 100]).
    return MAX_NODE_SCORE // 2 + (MAX_NODE_SCORE // 2 + with_pod - without_pod) // 2


# -- label selectors (pods) ---------------------------------------------------

# -- inter-pod affinity terms -------------------------------------------------

@dataclass(frozen=True)
class _PodTerm:
    """A parsed PodAffinityTerm (with its weight for preferred terms)."""

    selector: list[Requirement] | None
    namespaces: frozenset[str]
    namespace_selector: list[Requirement] | None
    topology_key: str
    weight: int

    def matches(self, pod: Task) -> bool:
        """framework.AffinityTerm.Matches, with every namespace's labels empty (see module doc)."""
        if pod.namespace not in self.namespaces and not selects(self.namespace_selector, {}):
            return False
        return selects(self.selector, pod.labels)


def _parse_term(owner: Task, raw: dict, weight: int, incoming: bool) -> _PodTerm:
    """A term of ``owner``; ``incoming`` terms get a non-empty namespaceSelector resolved to nothing.

    No namespaces and no namespaceSelector mean the owner's own namespace.
    """
    names = [str(n) for n in _list(raw, "namespaces")]
    raw_ns_selector = raw.get("namespaceSelector")
    if not names and raw_ns_selector is None:
        names = [owner.namespace]
    ns_selector = parse_selector(raw_ns_selector)
    if incoming and ns_selector:
        ns_selector = None
    return _PodTerm(parse_selector(raw.get("labelSelector")), frozenset(names), ns_selector,
                    str(raw.get("topologyKey") or ""), weight)


@_memo
def _required_terms(task: Task, kind: str, incoming: bool, weight: int = 0) -> list[_PodTerm]:
    """Required terms; ``weight`` is what a match is worth when scoring (hard affinity)."""
    if not _has_pod_affinity(task):
        return []
    block = _affinity(task, kind)
    return [_parse_term(task, raw, weight, incoming)
            for raw in _list(block, "requiredDuringSchedulingIgnoredDuringExecution") if isinstance(raw, dict)]


@_memo
def _preferred_terms(task: Task, kind: str, incoming: bool) -> list[_PodTerm]:
    if not _has_pod_affinity(task):
        return []
    block = _affinity(task, kind)
    return [_parse_term(task, _mapping(raw, "podAffinityTerm"), int(raw.get("weight") or 0), incoming)
            for raw in _list(block, "preferredDuringSchedulingIgnoredDuringExecution") if isinstance(raw, dict)]


def _has_pod_affinity(task: Task) -> bool:
    """Kubernetes' "pod with affinity": any podAffinity or podAntiAffinity block (asked of every
    pod placed, most of which have no affinity at all: two lookups, nothing kept)."""
    affinity = _spec(task).get("affinity")
    return isinstance(affinity, dict) and (isinstance(affinity.get("podAffinity"), dict)
                                           or isinstance(affinity.get("podAntiAffinity"), dict))


# -- topology spread constraints ----------------------------------------------

@dataclass(frozen=True)
class _SpreadConstraint:
    max_skew: int
    topology_key: str
    selector: list[Requirement] | None
    min_domains: int
    honor_node_affinity: bool
    honor_node_taints: bool


@_memo
def _spread_constraints(task: Task, action: str) -> list[_SpreadConstraint]:
    """The pod's constraints with ``whenUnsatisfiable == action``.

    ``matchLabelKeys`` adds the pod's own values for those keys to the selector
    (a selector that selects nothing stays so).  Node inclusion policies default
    to honouring node affinity and ignoring taints.
    """
    out = []
    for raw in _list(_spec(task), "topologySpreadConstraints"):
        if not isinstance(raw, dict) or raw.get("whenUnsatisfiable") != action:
            continue
        selector = parse_selector(raw.get("labelSelector"))
        extra = [(str(k), "In", (str(task.labels[k]),)) for k in _list(raw, "matchLabelKeys") if k in task.labels]
        if extra and selector is not None:
            selector = extra + selector
        min_domains = raw.get("minDomains")
        out.append(_SpreadConstraint(
            int(raw.get("maxSkew") or 0), str(raw.get("topologyKey") or ""), selector,
            1 if min_domains is None else int(min_domains),
            (raw.get("nodeAffinityPolicy") or "Honor") == "Honor",
            (raw.get("nodeTaintsPolicy") or "Ignore") == "Honor"))
    return out


def _has_all_keys(node: Node, constraints: list[_SpreadConstraint]) -> bool:
    return all(c.topology_key in node.labels for c in constraints)


def _included(task: Task, node: Node, constraint: _SpreadConstraint) -> bool:
    """Node inclusion policies: whether the node's pods count towards the constraint's domains."""
    if constraint.honor_node_affinity and not matches_node_selector_and_affinity(task, node):
        return False
    if constraint.honor_node_taints and untolerated_taint(task, node, list(DO_NOT_SCHEDULE_EFFECTS)):
        return False
    return True


# -- the session-wide view ----------------------------------------------------

Placements = Mapping[str, tuple[Node, Task]]  # pod key -> (node, pod)


class PodView:
    """Which pod is on which node as a task's pre-predicate saw it: Volcano's per-task cycle state.

    Kubernetes' InterPodAffinity and PodTopologySpread filters do not look at
    the pods on the nodes: they read counts their pre-filters computed from
    every pod's placement, and the simulate hooks of a dry run move pods in and
    out of that state (``AddPod`` / ``RemovePod``).  A PodView is that state,
    changed only by :meth:`add` and :meth:`remove`: a copy of the placements
    (the reference engine), or the fast engine's live counts
    (``domain_counts.PodCounts``) plus what changed since it was taken, ``delta``
    (pod key -> (row, pod) where this view has it, None: not at all), which the
    live view records in every view it handed out before it changes.  ``placed``
    is the copy either way (made on first use from the counts).
    """

    __slots__ = ("_placed", "counts", "delta", "version", "answers", "__weakref__")

    def __init__(self, placed: dict[str, tuple[Node, Task]] | None = None) -> None:
        self._placed = None if placed is None else _Placements(placed)
        self.counts = None  # the live counts this view differs from by delta (None: a copy)
        self.delta: dict[str, tuple[int, Task] | None] = {}
        self.version = 0  # changes by the simulate hooks: answers are kept per version
        self.answers: dict[object, object] = {}

    @classmethod
    def tracking(cls, counts) -> PodView:
        view = cls()
        view.counts = counts
        return view

    @property
    def placed(self) -> _Placements:
        if self._placed is None:
            counts = self.counts
            nodes = counts.nodes
            placed = {key: (nodes[row], pod) for key, (row, pod) in counts.where.items() if key not in self.delta}
            placed.update({key: (nodes[seen[0]], seen[1]) for key, seen in self.delta.items() if seen is not None})
            self._placed = _Placements(placed)
        return self._placed

    def keep(self, key: str, old: tuple[int, Task] | None) -> None:
        """The live view is about to change ``key``: this view keeps it where it was."""
        if key not in self.delta:
            self.delta[key] = old

    def add(self, task: Task, node: Node) -> None:
        if self.counts is not None:
            row = self.counts.rows.get(node.name)
            if row is None:  # a node the session does not have: from now on only the copy answers
                _ = self.placed
                self.counts = None
            else:
                self.delta[task.key] = (row, task)
        if self._placed is not None:
            self._placed[task.key] = (node, task)
            if _has_pod_affinity(task):
                self._placed.with_affinity[task.key] = (node, task)
        self.version += 1

    def remove(self, task: Task) -> None:
        if self.counts is not None:
            self.delta[task.key] = None
        if self._placed is not None:
            self._placed.pop(task.key, None)
            self._placed.with_affinity.pop(task.key, None)
        self.version += 1


class _Placements(dict):
    """Placements plus the index of those pods that have pod (anti-)affinity terms."""

    def __init__(self, placed: dict[str, tuple[Node, Task]]) -> None:
        super().__init__(placed)
        self.with_affinity = {key: where for key, where in placed.items() if _has_pod_affinity(where[1])}


class K8sView:
    """Cluster-wide Kubernetes filters and scores over the session's k8s node view."""

    def __init__(self, nodes: list[Node], counts=None) -> None:
        self.nodes = list(nodes)
        # Pods with any pod (anti-)affinity, by key: the only existing pods whose own
        # terms matter to the filter and the scorer, kept current by placed/removed.
        self._with_affinity: dict[str, tuple[Node, Task]] = {
            key: (node, pod) for node in self.nodes for key, pod in node.view_pods.items() if _has_pod_affinity(pod)}
        self._image_holders: Counter[str] | None = None
        # The fast engine's counts of matching pods per node (domain_counts.PodCounts), None for
        # the reference engine, which scans the pods as defined here.
        self.counts = counts

    def placed(self, task: Task, node: Node) -> None:
        """The session added ``task`` to ``node``'s view."""
        if _has_pod_affinity(task):
            self._with_affinity[task.key] = (node, task)
        if self.counts is not None:
            self.counts.placed(task, node)

    def removed(self, task: Task) -> None:
        """The session removed ``task`` from its node's view."""
        self._with_affinity.pop(task.key, None)
        if self.counts is not None:
            self.counts.removed(task)

    def pod_view(self, task: Task) -> PodView:
        """A copy of the placements ``task``'s filters read.

        Every pod when the task's own required pod (anti-)affinity terms or
        DoNotSchedule spread constraints look at them all; otherwise only the
        pods with affinity terms, whose anti-affinity may repel it (cheap: the
        pre-predicate of every task takes one).  With counts, the live counts
        and what changes from now on instead of a copy.
        """
        if self.counts is not None:
            return self.counts.view()
        if (_required_terms(task, "podAffinity", True) or _required_terms(task, "podAntiAffinity", True)
                or _spread_constraints(task, "DoNotSchedule")):
            return PodView({key: (node, pod) for node in self.nodes for key, pod in node.view_pods.items()})
        return PodView(dict(self._with_affinity))

    def _others_with_affinity(self, task: Task, placed: Placements | None = None) -> Iterator[tuple[Node, Task]]:
        """As :meth:`_others`, restricted to pods that have pod (anti-)affinity terms."""
        index = self._with_affinity if placed is None else getattr(placed, "with_affinity", None)
        if index is None:
            index = {key: where for key, where in placed.items() if _has_pod_affinity(where[1])}
        for key, (node, other) in index.items():
            if key != task.key:
                yield node, other

    def _others(self, task: Task, placed: Placements | None = None) -> Iterator[tuple[Node, Task]]:
        """(node, pod) for every pod except ``task`` itself: the live view in node order, or ``placed``."""
        if placed is not None:
            for key, (node, other) in placed.items():
                if key != task.key:
                    yield node, other
            return
        for node in self.nodes:
            for key, other in node.view_pods.items():
                if key != task.key:
                    yield node, other

    def _count_matching(self, node: Node, selector: list[Requirement] | None, task: Task,
                        pods: Mapping[str, Task] | None = None) -> int:
        """Pods of the incoming pod's namespace on the node (or among ``pods``) that the selector picks.

        An empty selector counts nothing and terminating pods are skipped, as in
        Kubernetes' spread counting.
        """
        if selector == []:
            return 0
        return sum(1 for key, other in (node.view_pods if pods is None else pods).items()
                   if key != task.key and other.namespace == task.namespace
                   and not _terminating(other) and selects(selector, other.labels))

    # -- InterPodAffinity -----------------------------------------------------
    def affinity_cannot_refuse(self, task: Task, placed: Placements | None = None) -> bool:
        """No pod has terms that could refuse ``task`` on any node (the filter's first shortcut)."""
        index = self._with_affinity if placed is None else getattr(placed, "with_affinity", None)
        return index is not None and not index and not has_required_pod_terms(task)

    def pod_affinity_failure(self, task: Task, node: Node, placed: Placements | None = None) -> str | None:
        """InterPodAffinity Filter: why the node is refused, or None.

        Checked in Kubernetes' order: the pod's required affinity, its required
        anti-affinity, then existing pods' required anti-affinity towards it.
        The pods are the live view, or the placements of a :class:`PodView`.
        """
        if self.affinity_cannot_refuse(task, placed):
            return None  # nobody has terms that could refuse this pod
        affinity = _required_terms(task, "podAffinity", True)
        labels = node.labels
        if affinity:
            counts: Counter[tuple[str, str]] = Counter()
            for other_node, other in self._others(task, placed):
                if all(t.matches(other) for t in affinity):
                    for t in affinity:
                        if t.topology_key in other_node.labels:
                            counts[(t.topology_key, other_node.labels[t.topology_key])] += 1
            if any(t.topology_key not in labels for t in affinity):
                return AFFINITY_FAILURE
            if any(counts[(t.topology_key, labels[t.topology_key])] <= 0 for t in affinity):
                # The first pod of a group with affinity to itself may go anywhere
                # as long as no pod matches the terms yet.
                if counts or not all(t.matches(task) for t in affinity):
                    return AFFINITY_FAILURE
        anti = [t for t in _required_terms(task, "podAntiAffinity", True) if t.topology_key in labels]
        for other_node, other in (self._others(task, placed) if anti else ()):
            for t in anti:
                if other_node.labels.get(t.topology_key) == labels[t.topology_key] and t.matches(other):
                    return ANTI_AFFINITY_FAILURE
        for other_node, other in self._others_with_affinity(task, placed):
            for t in _required_terms(other, "podAntiAffinity", False):
                value = other_node.labels.get(t.topology_key)
                if value is not None and labels.get(t.topology_key) == value and t.matches(task):
                    return EXISTING_ANTI_AFFINITY_FAILURE
        return None

    def inter_pod_affinity_scores(self, task: Task, nodes: list[Node]) -> dict[Node, int] | None:
        """InterPodAffinity PreScore + Score + NormalizeScore for the candidate nodes.

        Each existing pod adds, to every node sharing its node's topology value:
        the incoming pod's preferred affinity (+weight) / anti-affinity (-weight)
        terms it matches, and its own required affinity (+1), preferred affinity
        (+weight) and preferred anti-affinity (-weight) terms the incoming pod
        matches.  Without preferred terms of its own, the incoming pod only looks
        at pods with affinity.  None (skip) when no term contributed anything.
        """
        own_affinity = _preferred_terms(task, "podAffinity", True)
        own_anti = _preferred_terms(task, "podAntiAffinity", True)
        has_constraints = bool(own_affinity or own_anti)
        topology: dict[str, dict[str, int]] = {}
        contributed = False

        def add(terms: list[_PodTerm], pod: Task, where: Node, sign: int) -> None:
            nonlocal contributed
            for t in terms:
                if t.topology_key in where.labels and t.matches(pod):
                    per_value = topology.setdefault(t.topology_key, {})
                    value = where.labels[t.topology_key]
                    per_value[value] = per_value.get(value, 0) + sign * t.weight
                    contributed = True

        for other_node, other in (self._others(task) if has_constraints else self._others_with_affinity(task)):
            if not other_node.labels:
                continue
            add(own_affinity, other, other_node, 1)
            add(own_anti, other, other_node, -1)
            add(_required_terms(other, "podAffinity", False, HARD_POD_AFFINITY_WEIGHT), task, other_node, 1)
            add(_preferred_terms(other, "podAffinity", False), task, other_node, 1)
            add(_preferred_terms(other, "podAntiAffinity", False), task, other_node, -1)
        if not contributed:
            return None
        raw = {node: sum(per_value.get(node.labels[key], 0)
                         for key, per_value in topology.items() if key in node.labels)
               for node in nodes}
        low, high = min(raw.values(), default=0), max(raw.values(), default=0)
        spread = high - low
        return {node: int(MAX_NODE_SCORE * ((score - low) / spread)) if spread > 0 else 0
                for node, score in raw.items()}

    # -- PodTopologySpread ----------------------------------------------------
    def topology_spread_failure(self, task: Task, node: Node, placed: Placements | None = None) -> str | None:
        """PodTopologySpread Filter over the DoNotSchedule constraints.

        Per constraint, matching pods are counted per domain over nodes that
        carry every constraint key and pass the inclusion policies; placing the
        pod must keep ``count(domain) + self - global minimum <= maxSkew``, the
        minimum being 0 while there are fewer domains than ``minDomains``.  The
        pods are the live view, or the placements of a :class:`PodView`.
        """
        constraints = _spread_constraints(task, "DoNotSchedule")
        if not constraints:
            return None
        pods_on: dict[str, dict[str, Task]] | None = None
        if placed is not None:
            pods_on = {n.name: {} for n in self.nodes}
            for key, (where, pod) in placed.items():
                pods_on.setdefault(where.name, {})[key] = pod
        counts: list[dict[str, int]] = [{} for _ in constraints]
        for other_node in self.nodes:
            if not _has_all_keys(other_node, constraints):
                continue
            pods = pods_on[other_node.name] if pods_on is not None else None
            for i, c in enumerate(constraints):
                if _included(task, other_node, c):
                    value = other_node.labels[c.topology_key]
                    counts[i][value] = counts[i].get(value, 0) + self._count_matching(other_node, c.selector, task, pods)
        for i, c in enumerate(constraints):
            if c.topology_key not in node.labels:
                return SPREAD_LABEL_FAILURE
            domains = counts[i]
            minimum = 0 if len(domains) < c.min_domains else min(domains.values(), default=2**31 - 1)
            self_match = 1 if selects(c.selector, task.labels) else 0
            if domains.get(node.labels[c.topology_key], 0) + self_match - minimum > c.max_skew:
                return SPREAD_FAILURE
        return None

    def topology_spread_scores(self, task: Task, nodes: list[Node]) -> dict[Node, int] | None:
        """PodTopologySpread PreScore + Score + NormalizeScore over the ScheduleAnyway constraints.

        A node's raw score sums, per constraint, ``matching pods in its domain *
        log(domains + 2) + maxSkew - 1`` (domains = distinct values among the
        candidates; hostname domains are counted on the node itself), rounded;
        fewer pods is better, so the normalised score is
        ``100 * (max + min - raw) // max``.  Candidates missing a constraint key
        score 0.  None (skip) without soft constraints; system-default
        constraints are not modelled.
        """
        constraints = _spread_constraints(task, "ScheduleAnyway")
        if not constraints or not self.nodes:
            return None
        ignored = {id(n) for n in nodes if not _has_all_keys(n, constraints)}
        scored = [n for n in nodes if id(n) not in ignored]
        counts: list[dict[str, int]] = []
        weights: list[float] = []
        for c in constraints:
            values = {n.labels[c.topology_key] for n in scored}
            counts.append({} if c.topology_key == HOSTNAME_LABEL else dict.fromkeys(values, 0))
            size = len(scored) if c.topology_key == HOSTNAME_LABEL else len(values)
            weights.append(math.log(size + 2))
        for other_node in self.nodes:
            if not _has_all_keys(other_node, constraints):
                continue
            for i, c in enumerate(constraints):
                value = other_node.labels[c.topology_key]
                if value in counts[i] and _included(task, other_node, c):
                    counts[i][value] += self._count_matching(other_node, c.selector, task)
        raw: dict[Node, int] = {}
        for n in scored:
            total = 0.0
            for i, c in enumerate(constraints):
                if c.topology_key == HOSTNAME_LABEL:
                    matched = self._count_matching(n, c.selector, task)
                else:
                    matched = counts[i][n.labels[c.topology_key]]
                total += matched * weights[i] + (c.max_skew - 1)
            raw[n] = _go_round(total)
        high = max(raw.values(), default=0)
        low = min(raw.values(), default=0)
        result = {}
        for n in nodes:
            if id(n) in ignored:
                result[n] = 0
            elif high == 0:
                result[n] = MAX_NODE_SCORE
            else:
                result[n] = MAX_NODE_SCORE * (high + low - raw[n]) // high
        return result

    # -- ImageLocality ----------------------------------------------------------
    def any_node_has_images_of(self, task: Task) -> bool:
        """Some node holds one of the pod's images (else every node scores the minimum, 0)."""
        if self._image_holders is None:
            self._image_holders = Counter()
            for n in self.nodes:
                self._image_holders.update(set(_node_image_sizes(n)))
        return any(image in self._image_holders for image in _pod_images(task))

    def image_locality_score(self, task: Task, node: Node) -> int:
        """:func:`image_locality_score` with the image spread taken from the session's nodes."""
        if not self.any_node_has_images_of(task):
            return 0
        return image_locality_score(task, node, len(self.nodes) or 1, self._image_holders)
