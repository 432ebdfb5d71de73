"""The diagnostics about a cluster's Kubernetes objects (K codes, docs/diagnostics.md): objects
that cannot be read, and what is legal but worth telling.  One constructor per problem (as
policy_lang's ``declaration_errors.py``): the message and hint are written here once, and the
readers pass facts -- the file, where, names, the value found.

The object readers (``kube.py``, ``kube_convert.py``, ``kube_fields.py``, ``numa_fields.py``,
``hypernodes.py``) find the place through the one positioned reader,
``kube_convert.ObjectReader`` (``at``, ``at_key``), and hand it the constructed diagnostic
(``report``).
"""

from __future__ import annotations

from typing import Sequence

from fumarole.policy_lang.diagnostics import NO_POSITION, Diagnostic, Span, did_you_mean
from fumarole.runtime.api.numa import MAX_CPU_ID
from fumarole.runtime.api.quantity import QuantityError
from fumarole.runtime.api.quoting import clip


# -- K001 objects that cannot be read ----------------------------------------------------------------

def malformed_cluster(file: str, at: Span, message: str) -> Diagnostic:
    """The YAML or JSON reader's own message (malformed YAML, a duplicate key...)."""
    return Diagnostic("K001", message, file, at)


def unreadable_body(file: str, at: Span, reason: str) -> Diagnostic:
    return Diagnostic("K001", f"the body is {reason}", file, at)


def too_many_body_objects(file: str, count: int, limit: int) -> Diagnostic:
    return Diagnostic("K001", f"the body holds {count:,} objects; fumarole reads at most {limit:,} per session", file,
                      span=NO_POSITION)


def too_many_body_documents(file: str, line: int, limit: int) -> Diagnostic:
    return Diagnostic("K001", f"more than {limit:,} YAML documents in one body (fumarole's limit per session)", file,
                      Span(line, 1))


def bad_request_time(now: str) -> Diagnostic:
    return Diagnostic("K001", f"now={now!r} is not an RFC 3339 time", "request", span=NO_POSITION)


# -- K002 objects of no kind fumarole reads --------------------------------------------------------

def object_without_kind(file: str, at: Span) -> Diagnostic:
    return Diagnostic("K002", "object has no kind", file, at)


def kind_not_a_string(file: str, at: Span, kind: object, kinds: Sequence[str]) -> Diagnostic:
    return Diagnostic("K002", f"kind must be a string, not {clip(repr(kind))}", file, at,
                      hint=f"fumarole reads {', '.join(kinds)}")


def unknown_kind(file: str, at: Span, kind: str, kinds: Sequence[str]) -> Diagnostic:
    return Diagnostic("K002", f"unknown kind {clip(repr(kind))}", file, at,
                      hint=did_you_mean(kind, kinds) or f"fumarole reads {', '.join(kinds)}")


# -- K003 quantities that do not parse ---------------------------------------------------------------

def bad_quantity(file: str, at: Span, field: str, error: QuantityError) -> Diagnostic:
    """``field``: the quantity's dotted place in its object, named after the object."""
    return Diagnostic("K003", f"bad quantity in {field}: {error}", file, at)


# -- K004 / K008 objects Kubernetes would refuse ------------------------------------------------------

def object_without_name(file: str, at: Span, kind: str) -> Diagnostic:
    return Diagnostic("K004", f"{kind} has no metadata.name", file, at)


def list_items_not_a_list(file: str, at: Span, kind: str, items: object) -> Diagnostic:
    return Diagnostic("K004", f"items of a {kind} must be a list of objects, not {clip(repr(items))}", file, at)


def resources_not_a_map(file: str, at: Span, field: str) -> Diagnostic:
    """``field``: the resource list's dotted place (``Node n1.status.allocatable``)."""
    return Diagnostic("K004", f"{field} must be a map of resource quantities", file, at)


def pod_containers_empty(file: str, at: Span, pod: str) -> Diagnostic:
    return Diagnostic("K004", f"spec.containers of Pod {pod} is empty: Kubernetes requires at least one container",
                      file, at)


def pod_without_containers(file: str, at: Span, pod: str, near: str | None = None) -> Diagnostic:
    """``near``: a key of the pod spec that is most likely a misspelt ``containers``."""
    return Diagnostic("K004", f"Pod {pod} has no spec.containers: Kubernetes requires at least one container", file,
                      at, hint="each pod lists its containers, with their resource requests" if near is None
                      else f"did you mean 'containers' for {near!r}?")


def hyper_node_without_spec(file: str, at: Span, hyper_node: str) -> Diagnostic:
    return Diagnostic("K004", f"HyperNode {hyper_node} has no spec", file, at)


def _member(file: str, at: Span, hyper_node: str, index: int, problem: str) -> Diagnostic:
    """A ``spec.members`` entry Volcano's HyperNode API refuses; ``problem`` follows its place."""
    return Diagnostic("K004", f"HyperNode {hyper_node} spec.members[{index}]{problem}", file, at)


def member_not_a_mapping(file: str, at: Span, hyper_node: str, index: int) -> Diagnostic:
    return _member(file, at, hyper_node, index, " must be a mapping with type and selector")


def member_type_unknown(file: str, at: Span, hyper_node: str, index: int, kind: object) -> Diagnostic:
    return _member(file, at, hyper_node, index, f".type must be Node or HyperNode, not {kind!r}")


def member_selector_not_a_mapping(file: str, at: Span, hyper_node: str, index: int) -> Diagnostic:
    return _member(file, at, hyper_node, index, ".selector must be a mapping (exactMatch, regexMatch or labelMatch)")


def member_selectors_not_one(file: str, at: Span, hyper_node: str, index: int, given: Sequence[str]) -> Diagnostic:
    return _member(file, at, hyper_node, index, ".selector needs exactly one of exactMatch, regexMatch, labelMatch "
                   f"(got {', '.join(given) or 'none'})")


def exact_match_without_name(file: str, at: Span, hyper_node: str, index: int) -> Diagnostic:
    return _member(file, at, hyper_node, index, ".selector.exactMatch needs a name")


def hyper_node_member_not_exact(file: str, at: Span, hyper_node: str, index: int) -> Diagnostic:
    return _member(file, at, hyper_node, index, ": a HyperNode member is selected by exactMatch only")


def regex_match_without_pattern(file: str, at: Span, hyper_node: str, index: int) -> Diagnostic:
    return _member(file, at, hyper_node, index, ".selector.regexMatch needs a pattern (a string)")


def regex_match_refused(file: str, at: Span, hyper_node: str, index: int, error: object) -> Diagnostic:
    return _member(file, at, hyper_node, index,
                   f".selector.regexMatch.pattern is not a regular expression Volcano accepts: {error}")


def label_match_not_a_selector(file: str, at: Span, hyper_node: str, index: int) -> Diagnostic:
    return _member(file, at, hyper_node, index, ".selector.labelMatch must be a label selector")


def numa_cpu_list_invalid(file: str, at: Span, resource: object, text: str) -> Diagnostic:
    return Diagnostic("K004", f"spec.numares.{resource}.allocatable {clip(text)!r} is not a CPU list "
                      f"(ids 0..{MAX_CPU_ID} and ranges, e.g. '0-3,8')", file, at)


def numa_cpu_id_invalid(file: str, at: Span, key: object) -> Diagnostic:
    return Diagnostic("K004", f"spec.cpuDetail key {clip(str(key))!r} is not a CPU id (0..{MAX_CPU_ID})", file, at)


def numa_cpu_number_negative(file: str, at: Span, cpu: object, field: str, number: int) -> Diagnostic:
    return Diagnostic("K004", f"spec.cpuDetail.{cpu}.{field} must not be negative, not {number}", file, at)


def empty_cluster(file: str) -> Diagnostic:
    return Diagnostic("K008", "the cluster holds no objects", file, NO_POSITION,
                      hint="a cluster dump is Kubernetes objects (Nodes, Pods, PodGroups, Queues...), one YAML "
                           "document each or a kind: List")


# -- K005 .. K007 objects that are not objects, twice, or of the wrong types --------------------------

def not_an_object(file: str, at: Span) -> Diagnostic:
    return Diagnostic("K005", "expected a Kubernetes object (a mapping with apiVersion and kind)", file, at)


def duplicate_object(file: str, at: Span, kind: str, name: str) -> Diagnostic:
    """``name``: namespace/name, or the name of an object without a namespace."""
    return Diagnostic("K006", f"duplicate {kind} {name}", file, at)


def field_mistyped(file: str, at: Span, field: str, subject: str, expected: str, value: object) -> Diagnostic:
    """``subject``: the object (``PodGroup pg``); ``expected``: the type in words (``an integer``)."""
    return Diagnostic("K007", f"{field} of {subject} must be {expected}, not {clip(repr(value))}", file, at)


def hyper_node_members_not_a_list(file: str, at: Span, hyper_node: str) -> Diagnostic:
    return Diagnostic("K007", f"spec.members of HyperNode {hyper_node} must be a list", file, at)


# -- K101 .. K107 warnings: what Volcano silently leaves out ------------------------------------------

def pod_group_queue_missing(file: str, at: Span, pod_group: str, queue: str) -> Diagnostic:
    return Diagnostic("K101", f"PodGroup {pod_group} names queue {queue!r}, which does not exist: Volcano leaves the "
                      "group out of the session", file, at, severity="warning")


def pod_group_missing(file: str, at: Span, pod: str, group: str) -> Diagnostic:
    return Diagnostic("K102", f"Pod {pod} names PodGroup {group!r}, which does not exist: Volcano does not schedule it",
                      file, at, severity="warning")


def unknown_field(file: str, at: Span, field: str, kind: str, name: str, hint: str | None) -> Diagnostic:
    return Diagnostic("K103", f"unknown field {field!r} in {kind} {name}: fumarole ignores it", file, at,
                      severity="warning", hint=hint)


def queue_field_outside_api(file: str, at: Span, field: str, name: str, key: str, hint: str | None) -> Diagnostic:
    return Diagnostic("K105", f"field {field!r} of Queue {name} is not in Volcano's Queue API: Volcano's plugins "
                      f"ignore it, a policy reads it as queue.spec[{key!r}]", file, at, severity="warning", hint=hint)


def hyper_node_member_node_missing(file: str, at: Span, hyper_node: str, node: str) -> Diagnostic:
    return Diagnostic("K104", f"HyperNode {hyper_node} has member node {node!r}, which is not in the cluster: "
                      "Volcano leaves it out", file, at, severity="warning")


def numatopology_without_node(file: str, at: Span, name: str) -> Diagnostic:
    return Diagnostic("K106", f"Numatopology {name} names no node of the cluster: Volcano leaves it out", file, at,
                      severity="warning")


def node_shard_missing(file: str, shard: str, mode: str) -> Diagnostic:
    effect = "schedules onto no node" if mode == "hard" else "prefers no node"
    return Diagnostic("K107", f"--scheduler-sharding-mode {mode} names NodeShard {shard!r}, which the cluster does not "
                      f"have: Volcano keeps no node in its shard and {effect}", file, NO_POSITION, severity="warning",
                      hint="add the NodeShard (shard.volcano.sh/v1alpha1) or set --scheduler-sharding-name")


# -- K110 .. K113 hierarchies: queues and HyperNodes --------------------------------------------------

_QUEUE_HIERARCHY_HINT = "fix spec.parent, or turn enableHierarchy off for the plugin"


def _chain(names: list[str], shown: int = 8) -> str:
    """``a -> b -> a``; a chain of thousands keeps its ends and says how many links it skips, so
    the message stays one readable line."""
    if len(names) <= shown:
        return " -> ".join(names)
    head, tail = names[:shown // 2], names[-(shown // 2):]
    return f"{' -> '.join(head)} -> ({len(names) - shown:,} more) -> {' -> '.join(tail)}"


def queue_parent_missing(file: str, at: Span, queue: str, parent: str) -> Diagnostic:
    """Volcano's capacity plugin logs the same and is not ready (updateAncestors' error)."""
    return Diagnostic("K110", f"queue {queue!r} has parent {parent!r}, which is not a queue: with enableHierarchy "
                      "the capacity plugin is not ready (it admits, allocates and reclaims nothing)", file, at,
                      severity="warning", hint=_QUEUE_HIERARCHY_HINT)


def queue_cycle(file: str, at: Span, queue: str, chain: list[str]) -> Diagnostic:
    """Volcano logs nothing: the cycle hangs off the tree under root (queue_tree's docstring)."""
    return Diagnostic("K110", f"queue {queue!r} is its own ancestor (spec.parent links {_chain(chain)}): with "
                      "enableHierarchy these queues and those below them get no capacity, and a job in the "
                      "cycle leaves the capacity plugin not ready", file, at, severity="warning",
                      hint=_QUEUE_HIERARCHY_HINT)


def hyper_node_two_parents(file: str, at: Span, child: str, first: str, second: str) -> Diagnostic:
    return Diagnostic("K111", f"HyperNode {child} is a member of both {first} and {second}: a HyperNode has one parent",
                      file, at)


def hyper_node_member_missing(file: str, at: Span, hyper_node: str, child: str) -> Diagnostic:
    return Diagnostic("K112", f"HyperNode {hyper_node} has member HyperNode {child!r}, which does not exist: Volcano "
                      "keeps an empty placeholder of that name (tier 0, no nodes)", file, at, severity="warning",
                      hint="add the HyperNode or remove the member")


def hyper_node_cycle(file: str, at: Span, hyper_node: str, cycle: list[str]) -> Diagnostic:
    return Diagnostic("K113", f"HyperNode {hyper_node} is its own ancestor (parent links {_chain(cycle)})", file, at,
                      hint="HyperNode members must form a tree")
