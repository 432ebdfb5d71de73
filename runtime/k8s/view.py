"""The session-wide half of the Kubernetes scheduler plugins Volcano's predicates and
nodeorder plugins wrap: the k8s view of every node's pods.

Volcano does not re-implement node affinity, taints, host ports, inter-pod
affinity or topology spreading: it calls the Kubernetes v1.36 framework plugins
against its own "k8s view" of each node (``Node.view_pods``).  The policies do the
same through runtime/k8s/ (one module per Kubernetes plugin: nodeaffinity,
tainttoleration, nodeunschedulable, nodeports, imagelocality, noderesources,
interpodaffinity, podtopologyspread; podspec reads the pod, and this module
is the view), so every rule there follows the Kubernetes plugin
behaviour, quirks included (an empty required node-selector term matches
nothing, an empty spread selector counts no pods, InterPodAffinity normalises
with min-max...).

Two layers:

* the plugin modules' functions are stateless: they look at one task and one node;
* :class:`K8sView` is built once per session with the session's node list and
  answers questions that need every pod of the cluster (inter-pod affinity,
  topology spreading).  It reads ``node.view_pods`` on every call because the
  view changes while the session allocates, pipelines and evicts.

Namespaces: see interpodaffinity.py (a namespace label set is always empty).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Iterator, Mapping, Protocol

from fumarole.runtime.api.labels import Requirement, selects
from fumarole.runtime.api.model import Node, Task
from fumarole.runtime.k8s.imagelocality import image_locality_score, node_image_sizes, pod_images
from fumarole.runtime.k8s.interpodaffinity import (
    AFFINITY_FAILURE,
    ANTI_AFFINITY_FAILURE,
    EXISTING_ANTI_AFFINITY_FAILURE,
    HARD_POD_AFFINITY_WEIGHT,
    has_pod_affinity,
    has_required_pod_terms,
    PodTerm,
    preferred_terms,
    required_terms,
)
from fumarole.runtime.k8s.podspec import MAX_NODE_SCORE, terminating
from fumarole.runtime.k8s.podtopologyspread import (
    go_round,
    has_all_keys,
    HOSTNAME_LABEL,
    included,
    spread_constraints,
    SPREAD_FAILURE,
    SPREAD_LABEL_FAILURE,
)


# The reasons Kubernetes reports as UnschedulableAndUnresolvable: evicting pods cannot fix them.
UNRESOLVABLE_REASONS = frozenset({AFFINITY_FAILURE, SPREAD_LABEL_FAILURE})


Placements = Mapping[str, tuple[Node, Task]]  # pod key -> (node, pod)


class LivePodCounts(Protocol):
    """What a :class:`PodView` reads of the fast engine's live counts (``domain_counts.PodCounts``,
    which builds on this module, so it is named here by its shape)."""

    nodes: list[Node]
    where: dict[str, tuple[int, Task]]
    rows: dict[str, int]


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
        self.counts: LivePodCounts | None = None  # the live counts this view differs from by delta (None: a copy)
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
            assert counts is not None, "a view without a copy tracks the live counts"
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
            if has_pod_affinity(task):
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
        self.with_affinity = {key: where for key, where in placed.items() if has_pod_affinity(where[1])}


class K8sView:
    """Cluster-wide Kubernetes filters and scores over the session's k8s node view."""

    def __init__(self, nodes: list[Node], counts=None) -> None:
        self.nodes = list(nodes)
        # Pods with any pod (anti-)affinity, by key: the only existing pods whose own
        # terms matter to the filter and the scorer, kept current by placed/removed.
        self._with_affinity: dict[str, tuple[Node, Task]] = {
            key: (node, pod) for node in self.nodes for key, pod in node.view_pods.items() if has_pod_affinity(pod)}
        self._image_holders: Counter[str] | None = None
        # The fast engine's counts of matching pods per node (domain_counts.PodCounts), None for
        # the reference engine, which scans the pods as defined here.
        self.counts = counts

    def placed(self, task: Task, node: Node) -> None:
        """The session added ``task`` to ``node``'s view."""
        if has_pod_affinity(task):
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
        if (required_terms(task, "podAffinity", True) or required_terms(task, "podAntiAffinity", True)
                or spread_constraints(task, "DoNotSchedule")):
            return PodView({key: (node, pod) for node in self.nodes for key, pod in node.view_pods.items()})
        return PodView(dict(self._with_affinity))

    def _others_with_affinity(self, task: Task, placed: Placements | None = None) -> Iterator[tuple[Node, Task]]:
        """As :meth:`_others`, restricted to pods that have pod (anti-)affinity terms."""
        index: Mapping[str, tuple[Node, Task]] = self._with_affinity
        if placed is not None:
            kept = getattr(placed, "with_affinity", None)
            index = kept if kept is not None else {
                key: where for key, where in placed.items() if has_pod_affinity(where[1])}
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
                   and not terminating(other) and selects(selector, other.labels))

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
        affinity = required_terms(task, "podAffinity", True)
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
        anti = [t for t in required_terms(task, "podAntiAffinity", True) if t.topology_key in labels]
        for other_node, other in (self._others(task, placed) if anti else ()):
            for t in anti:
                if other_node.labels.get(t.topology_key) == labels[t.topology_key] and t.matches(other):
                    return ANTI_AFFINITY_FAILURE
        for other_node, other in self._others_with_affinity(task, placed):
            for t in required_terms(other, "podAntiAffinity", False):
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
        own_affinity = preferred_terms(task, "podAffinity", True)
        own_anti = preferred_terms(task, "podAntiAffinity", True)
        has_constraints = bool(own_affinity or own_anti)
        topology: dict[str, dict[str, int]] = {}
        contributed = False

        def add(terms: list[PodTerm], pod: Task, where: Node, sign: int) -> None:
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
            add(required_terms(other, "podAffinity", False, HARD_POD_AFFINITY_WEIGHT), task, other_node, 1)
            add(preferred_terms(other, "podAffinity", False), task, other_node, 1)
            add(preferred_terms(other, "podAntiAffinity", False), task, other_node, -1)
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
        constraints = spread_constraints(task, "DoNotSchedule")
        if not constraints:
            return None
        pods_on: dict[str, dict[str, Task]] | None = None
        if placed is not None:
            pods_on = {n.name: {} for n in self.nodes}
            for key, (where, pod) in placed.items():
                pods_on.setdefault(where.name, {})[key] = pod
        counts: list[dict[str, int]] = [{} for _ in constraints]
        for other_node in self.nodes:
            if not has_all_keys(other_node, constraints):
                continue
            pods = pods_on[other_node.name] if pods_on is not None else None
            for i, c in enumerate(constraints):
                if included(task, other_node, c):
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
        constraints = spread_constraints(task, "ScheduleAnyway")
        if not constraints or not self.nodes:
            return None
        ignored = {id(n) for n in nodes if not has_all_keys(n, constraints)}
        scored = [n for n in nodes if id(n) not in ignored]
        counts: list[dict[str, int]] = []
        weights: list[float] = []
        for c in constraints:
            values = {n.labels[c.topology_key] for n in scored}
            counts.append({} if c.topology_key == HOSTNAME_LABEL else dict.fromkeys(values, 0))
            size = len(scored) if c.topology_key == HOSTNAME_LABEL else len(values)
            weights.append(math.log(size + 2))
        for other_node in self.nodes:
            if not has_all_keys(other_node, constraints):
                continue
            for i, c in enumerate(constraints):
                value = other_node.labels[c.topology_key]
                if value in counts[i] and included(task, other_node, c):
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
            raw[n] = go_round(total)
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
                self._image_holders.update(set(node_image_sizes(n)))
        return any(image in self._image_holders for image in pod_images(task))

    def image_locality_score(self, task: Task, node: Node) -> int:
        """:func:`image_locality_score` with the image spread taken from the session's nodes."""
        if not self.any_node_has_images_of(task):
            return 0
        return image_locality_score(task, node, len(self.nodes) or 1, self._image_holders)
