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

* the plugin modules' functions are stateless: they look at one task and one node,
  or, for inter-pod affinity and topology spreading, at every pod of a view they
  are handed;
* :class:`K8sView` is built once per session with the session's node list and
  keeps that view (the pods with affinity terms, the image spread, the fast
  engine's counts), handing it to interpodaffinity.py and podtopologyspread.py.
  They read ``node.view_pods`` on every call because the view changes while the
  session allocates, pipelines and evicts.

Namespaces: see interpodaffinity.py (a namespace label set is always empty).
"""

from __future__ import annotations

from typing import Protocol

from fumarole.runtime.api.model import Node, Task
from fumarole.runtime.k8s.imagelocality import ImageState, cache_image_states, image_locality_score, pod_images
from fumarole.runtime.k8s import interpodaffinity, podtopologyspread
from fumarole.runtime.k8s.interpodaffinity import AFFINITY_FAILURE, has_pod_affinity, required_terms
from fumarole.runtime.k8s.podspec import Placements
from fumarole.runtime.k8s.podtopologyspread import SPREAD_LABEL_FAILURE, spread_constraints


# The reasons Kubernetes reports as UnschedulableAndUnresolvable: evicting pods cannot fix them.
UNRESOLVABLE_REASONS = frozenset({AFFINITY_FAILURE, SPREAD_LABEL_FAILURE})


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
        self._image_states: dict[str, dict[str, ImageState]] | None = None  # per node name
        self._images_held: set[str] = set()
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

    # -- InterPodAffinity (interpodaffinity.py) ---------------------------------
    def affinity_cannot_refuse(self, task: Task, placed: Placements | None = None) -> bool:
        return interpodaffinity.affinity_cannot_refuse(task, self._with_affinity, placed)

    def affinity_prefilter_skips(self, task: Task, placed: Placements | None = None) -> bool:
        return interpodaffinity.prefilter_skips(task, self._with_affinity, placed)

    def pod_affinity_failure(self, task: Task, node: Node, placed: Placements | None = None) -> str | None:
        return interpodaffinity.pod_affinity_failure(task, node, self.nodes, self._with_affinity, placed)

    def inter_pod_affinity_scores(self, task: Task, nodes: list[Node]) -> dict[Node, int] | None:
        return interpodaffinity.inter_pod_affinity_scores(task, nodes, self.nodes, self._with_affinity)

    # -- PodTopologySpread (podtopologyspread.py) --------------------------------
    def topology_spread_failure(self, task: Task, node: Node, placed: Placements | None = None) -> str | None:
        return podtopologyspread.topology_spread_failure(task, node, self.nodes, placed)

    def topology_spread_scores(self, task: Task, nodes: list[Node]) -> dict[Node, int] | None:
        return podtopologyspread.topology_spread_scores(task, nodes, self.nodes)

    # -- ImageLocality ----------------------------------------------------------
    def any_node_has_images_of(self, task: Task) -> bool:
        """Some node holds one of the pod's images (else every node scores the minimum, 0)."""
        if self._image_states is None:
            self._image_states = cache_image_states(self.nodes)
            self._images_held = {name for images in self._image_states.values() for name in images}
        return any(image in self._images_held for image in pod_images(task))

    def image_locality_score(self, task: Task, node: Node) -> int:
        """:func:`image_locality_score` with the image states Volcano's cache recorded for the node."""
        if not self.any_node_has_images_of(task):
            return 0
        assert self._image_states is not None
        return image_locality_score(task, self._image_states.get(node.name, {}), len(self.nodes) or 1)
