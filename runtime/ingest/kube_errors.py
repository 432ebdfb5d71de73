"""The diagnostics about a cluster's Kubernetes objects (K codes, docs/diagnostics.md): objects
that cannot be read, and what is legal but worth telling.  One constructor per problem (as
policy_lang's ``declaration_errors.py``): the message and hint are written here once, and the
readers pass facts -- the file, where, names.

The object readers' field-by-field problems word their own messages and reach a diagnostic
through the one positioned reader, ``kube_convert.ObjectReader`` (``fail``, ``fail_key``).
"""

from __future__ import annotations

from fumarole.policy_lang.diagnostics import NO_POSITION, Diagnostic, Span


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


# -- K004 / K008 objects Kubernetes would refuse ------------------------------------------------------

def pod_without_containers(file: str, at: Span, pod: str, near: str | None = None) -> Diagnostic:
    """``near``: a key of the pod spec that is most likely a misspelt ``containers``."""
    return Diagnostic("K004", f"Pod {pod} has no spec.containers: Kubernetes requires at least one container", file,
                      at, hint=None if near is None else f"did you mean 'containers' for {near!r}?")


def empty_cluster(file: str) -> Diagnostic:
    return Diagnostic("K008", "the cluster holds no objects", file, NO_POSITION,
                      hint="a cluster dump is Kubernetes objects (Nodes, Pods, PodGroups, Queues...), one YAML "
                           "document each or a kind: List")


# -- K101 .. K106 warnings: what Volcano silently leaves out ------------------------------------------

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


# -- K110 .. K113 hierarchies: queues and HyperNodes --------------------------------------------------

def queue_hierarchy(file: str, at: Span, message: str) -> Diagnostic:
    """``message``: the queue tree's own account of the broken link (queue_tree.HierarchyProblem)."""
    return Diagnostic("K110", message, file, at, hint="fix spec.parent, or turn enableHierarchy off for the plugin")


def hyper_node_two_parents(file: str, at: Span, child: str, first: str, second: str) -> Diagnostic:
    return Diagnostic("K111", f"HyperNode {child} is a member of both {first} and {second}: a HyperNode has one parent",
                      file, at)


def hyper_node_member_missing(file: str, at: Span, hyper_node: str, child: str) -> Diagnostic:
    return Diagnostic("K112", f"HyperNode {hyper_node} has member HyperNode {child!r}, which does not exist: Volcano "
                      "keeps an empty placeholder of that name (tier 0, no nodes)", file, at, severity="warning",
                      hint="add the HyperNode or remove the member")


def hyper_node_cycle(file: str, at: Span, hyper_node: str, cycle: str) -> Diagnostic:
    return Diagnostic("K113", f"HyperNode {hyper_node} is its own ancestor (parent links {cycle})", file, at,
                      hint="HyperNode members must form a tree")
