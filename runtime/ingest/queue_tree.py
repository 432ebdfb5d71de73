"""The queue hierarchy: queues linked by ``spec.parent`` into a tree under ``root``.

Volcano's hierarchical capacity plugin (``plugins/capacity/capacity.go``,
``buildHierarchicalQueueAttrs`` and ``updateAncestors``) links every queue to
its parent (no parent means the ``root`` queue).  A queue naming a parent that
does not exist (``root`` included) stops the plugin: it is "not ready".  A
cycle does not: ``updateAncestors`` records a queue before it recurses into
the parent, so its "cycle detected" check never fires, and the queues of a
cycle become each other's children, off the tree under ``root`` (so never
given a real capability).  Building the tree is graph plumbing, so it lives
here as one small library function (``queue_tree`` in
``runtime/schema.yaml``); what the plugin does with the tree, the quota
arithmetic, stays in ``policies/volcano/plugins/capacity.policy``.

A broken link is also something the user should see: every problem names the
queue at fault and becomes a warning at that queue's place in the cluster
file (``fumarole run`` prints it; the session runs as Volcano's would).

Each queue's ancestor list is a Go slice, and Volcano's lists share backing
arrays (go_slices.py): ``append(parent.ancestors, parent)`` writes into the
parent's array when it has room, which it has at depths 4, 6 to 8, 10 to 16...
Below a queue at depth 5 (9, 17, ...), the lists of the queues at depth 7 and 8
share one array, so a queue there lists the parent last written at that place:
its own, or a cousin's parent -- the tree's build order decides (a Go map's in
Volcano, the order the queues are given here), and so do capacity's allocatable
and enqueueable checks, whose ``append(attr.ancestors, queue)`` writes the
queue checked into the array (``append_self``): after a check of a leaf at
depth 6, every queue at depth 7 under the same depth-5 queue lists that leaf
as its parent, and capacity books its allocations there and checks its tasks
against that leaf's quota.  A tree less than 7 levels deep is never affected.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from fumarole.policy_lang.diagnostics import Diagnostic, Span
from fumarole.runtime.api.model import Queue
from fumarole.runtime.ingest import kube_errors, parent_links
from fumarole.runtime.ingest.go_slices import EMPTY, Slice, SliceArena
from fumarole.runtime.ingest.yamlpos import YamlError, load_all, walk_path

if TYPE_CHECKING:
    import networkx as nx

ROOT = "root"


@dataclass(frozen=True)
class HierarchyProblem:
    """A queue that cannot hang in the tree under ``root``: its parent is missing (``parent``
    set), or it is the first, in the order given, of a cycle of parents (``cycle``: the chain
    child -> parent back to it)."""

    queue: Queue
    parent: str | None = None
    cycle: tuple[str, ...] = ()

    def diagnostic(self, file: str, text: str | None = None) -> Diagnostic:
        """The problem at the queue's ``spec.parent`` (or wherever the queue is) in ``file``.

        ``text`` is the file's: a cluster read without positions (``load_cluster``'s fast path,
        taken when ingestion found nothing to report) finds the queue's place in it again.
        """
        raw = self.queue.raw if text is None else _positioned_queue(text, self.queue.name, self.queue.raw)
        at = Span(*walk_path(raw, iter(("spec", "parent"))))
        if self.parent is not None:
            return kube_errors.queue_parent_missing(file, at, self.queue.name, self.parent)
        return kube_errors.queue_cycle(file, at, self.queue.name, list(self.cycle))


def _positioned_queue(text: str, name: str, fallback: dict) -> dict:
    """The Queue object named ``name`` as read with positions from ``text`` (``fallback`` if absent)."""
    try:
        docs = load_all(text)
    except YamlError:
        return fallback
    for doc in docs:
        items = doc.get("items") if isinstance(doc, dict) and doc.get("kind") == "List" else [doc]
        for obj in items if isinstance(items, list) else ():
            meta = obj.get("metadata") if isinstance(obj, dict) and obj.get("kind") == "Queue" else None
            if isinstance(meta, dict) and meta.get("name") == name:
                return obj
    return fallback


@dataclass(frozen=True)
class QueueTree:
    """Queues as a directed graph, parent -> child, rooted at ``root``, and each queue's
    ancestors as Volcano's ``updateAncestors`` leaves them: a Go slice over ``arena``'s arrays,
    which ``append_self`` may write into afterwards (one tree per session, as Volcano builds its
    queue attributes anew in each)."""

    graph: nx.DiGraph
    queues: dict[str, Queue]
    problems: tuple[HierarchyProblem, ...] = ()
    lineage: dict[str, Slice] = field(default_factory=dict, repr=False)  # ancestors, by queue name
    arena: SliceArena = field(default_factory=SliceArena, repr=False)
    # ancestors() answers, dropped whenever a write changes what some slice shows
    _shown: dict[str, list[Queue]] = field(default_factory=dict, repr=False)

    @property
    def ok(self) -> bool:
        """``root`` exists and no queue names a missing parent (a cycle does not count:
        ``updateAncestors`` never reports one)."""
        return ROOT in self.queues and not any(p.parent is not None for p in self.problems)

    @property
    def root(self) -> Queue | None:
        return self.queues.get(ROOT)

    @property
    def top_down(self) -> list[Queue]:
        """Queues reachable from ``root``, every parent before its children (breadth first):
        the queues ``checkHierarchicalQueue`` hands capabilities down to."""
        import networkx as nx

        if ROOT not in self.graph:
            return []
        return [self.queues[ROOT]] + [self.queues[child] for _, child in nx.bfs_edges(self.graph, ROOT)]

    def children(self, queue: Queue) -> list[Queue]:
        """Children in the order the queues were given (deterministic, unlike a Go map); a queue
        of a cycle has its child in the cycle (itself, when it is its own parent)."""
        if queue.name not in self.graph:
            return []
        return [self.queues[name] for name in self.graph.successors(queue.name)]

    def ancestors(self, queue: Queue) -> list[Queue]:
        """``root`` first, down to the queue's parent; empty for ``root``.  Off the tree (in or
        below a cycle) the list ``updateAncestors`` builds, which may hold the queue itself.  In
        a tree 7 or more levels deep, what the queue's slice shows now (the module's docstring)."""
        shown = self._shown.get(queue.name)
        if shown is None:
            view = self.lineage.get(queue.name, EMPTY)
            shown = self._shown[queue.name] = [self.queues[name] for name in self.arena.items(view)]
        return shown

    def append_self(self, queue: Queue) -> list[Queue]:
        """capacity's ``list := append(attr.ancestors, queue)`` (checkQueueAllocatableHierarchically,
        checkJobEnqueueableHierarchically): the queue's ancestors, then the queue -- written into
        the ancestors' backing array where it has room, for every slice over it to see."""
        view, overwritten = self.arena.append(self.lineage.get(queue.name, EMPTY), queue.name)
        if overwritten:
            self._shown.clear()
        return [self.queues[name] for name in self.arena.items(view)]


def build_queue_tree(queues: Iterable[Queue]) -> QueueTree:
    """Link queues by ``spec.parent``; list every queue whose link is broken.

    Every queue has at most one parent, so following parents from any queue
    ends at ``root``, at a parent that does not exist, or in a cycle: those two
    are the problems.  Queues hanging below a broken queue are off the tree
    too, but the problem is named where it is.
    """
    import networkx as nx  # on first use: most sessions never build a queue tree

    by_name = {queue.name: queue for queue in queues}
    parents = {name: q.parent or ROOT for name, q in by_name.items() if name != ROOT}
    graph = nx.DiGraph()
    graph.add_nodes_from(by_name)
    graph.add_edges_from((parent, name) for name, parent in parents.items() if parent in by_name)
    problems = {name: HierarchyProblem(by_name[name], parent=parent)
                for name, parent in parents.items() if parent not in by_name}
    order = {name: i for i, name in enumerate(parents)}
    for ring in parent_links.cycles(parents, parents):  # each named after its first queue in the order given
        first = min(ring, key=order.__getitem__)
        problems[first] = HierarchyProblem(by_name[first], cycle=(*parent_links.starting_at(ring, first), first))
    in_order = tuple(problems[name] for name in by_name if name in problems)
    arena = SliceArena()
    return QueueTree(graph, by_name, in_order, _lineage(by_name, parents, arena), arena)


def _lineage(by_name: dict[str, Queue], parents: dict[str, str], arena: SliceArena) -> dict[str, Slice]:
    """Each queue's ancestors as ``updateAncestors`` builds them, visiting the queues in the order
    given (Volcano's is a Go map's).  A queue is recorded (with no ancestors yet) before its
    parent is visited, and a parent already recorded is not visited again, so in a cycle the
    last queue reached takes the first one's ancestors as they are then: for x -> y -> x met at
    x, y gets [x] and x gets [x, y].  Written as a loop over the chain the recursion would climb;
    each list is ``append(parent's, parent)`` in ``arena``, sharing arrays as Go's slices do."""
    lineage: dict[str, Slice] = {}
    for start in by_name:
        if start in lineage:
            continue
        chain = [start]
        lineage[start] = EMPTY
        while chain[-1] in parents and parents[chain[-1]] in by_name and parents[chain[-1]] not in lineage:
            chain.append(parents[chain[-1]])
            lineage[chain[-1]] = EMPTY
        for name in reversed(chain):  # the recursion unwinding: the topmost queue first
            if name in parents and parents[name] in by_name:
                lineage[name] = arena.append(lineage[parents[name]], parents[name])[0]
    return lineage
