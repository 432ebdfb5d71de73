"""The queue hierarchy: queues linked by ``spec.parent`` into a tree under ``root``.

Volcano's hierarchical capacity plugin (``plugins/capacity/capacity.go``,
``updateAncestors``) links every queue to its parent (no parent means the
``root`` queue) and refuses to schedule when a queue names a parent that does
not exist or the links form a cycle: the plugin is "not ready".  Building the
tree is graph plumbing, so it lives here as one small library function
(``queue_tree`` in ``runtime/schema.yaml``); what the plugin does with the
tree, the quota arithmetic, stays in ``policies/volcano/plugins/capacity.policy``.

A broken tree is also a configuration error the user should see: every
problem names the queue at fault and can become a diagnostic at that queue's
place in the cluster file (``fumarole run`` reports it and exits 2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from fumarole.policy_lang.diagnostics import Diagnostic, Span
from fumarole.runtime.api.model import Queue
from fumarole.runtime.ingest import kube_errors
from fumarole.runtime.ingest.yamlpos import YamlError, load_all, walk_path

if TYPE_CHECKING:
    import networkx as nx

ROOT = "root"


@dataclass(frozen=True)
class HierarchyProblem:
    """Why one queue cannot hang in the tree (a missing parent, or a cycle through it)."""

    queue: Queue
    message: str

    def diagnostic(self, file: str, text: str | None = None) -> Diagnostic:
        """The problem at the queue's ``spec.parent`` (or wherever the queue is) in ``file``.

        ``text`` is the file's: a cluster read without positions (``load_cluster``'s fast path,
        taken when ingestion found nothing to report) finds the queue's place in it again.
        """
        raw = self.queue.raw if text is None else _positioned_queue(text, self.queue.name, self.queue.raw)
        line, col = walk_path(raw, iter(("spec", "parent")))
        return kube_errors.queue_hierarchy(file, Span(line, col), self.message)


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
    """Queues as a directed graph, parent -> child, rooted at ``root`` when the tree is sound."""

    graph: nx.DiGraph
    queues: dict[str, Queue]
    problems: tuple[HierarchyProblem, ...] = ()
    paths: dict[str, list[str]] = field(default_factory=dict, repr=False)  # root-first, by queue name

    @property
    def ok(self) -> bool:
        """Every queue hangs under an existing ``root``: no missing parent, no cycle."""
        return not self.problems and ROOT in self.queues

    @property
    def root(self) -> Queue | None:
        return self.queues.get(ROOT)

    @property
    def top_down(self) -> list[Queue]:
        """Queues reachable from ``root``, every parent before its children (breadth first)."""
        import networkx as nx

        if ROOT not in self.graph:
            return []
        return [self.queues[ROOT]] + [self.queues[child] for _, child in nx.bfs_edges(self.graph, ROOT)]

    def children(self, queue: Queue) -> list[Queue]:
        """Children in the order the queues were given (deterministic, unlike a Go map)."""
        if queue.name not in self.graph:
            return []
        return [self.queues[name] for name in self.graph.successors(queue.name)]

    def ancestors(self, queue: Queue) -> list[Queue]:
        """``root`` first, down to the queue's parent; empty for ``root`` and for queues off the tree."""
        path = self.paths.get(queue.name)
        return [self.queues[name] for name in path[:-1]] if path else []


def build_queue_tree(queues: Iterable[Queue]) -> QueueTree:
    """Link queues by ``spec.parent``; list every queue whose link is broken.

    Every queue has at most one parent, so following parents from any queue
    ends at ``root``, at a parent that does not exist, or in a cycle: those two
    are the problems.  Queues hanging below a broken queue are off the tree
    too, but the problem is named where it is.
    """
    import networkx as nx  # on first use: most sessions never build a queue tree

    by_name = {queue.name: queue for queue in queues}
    graph = nx.DiGraph()
    graph.add_nodes_from(by_name)
    problems = []
    for queue in by_name.values():
        if queue.name == ROOT:
            continue
        parent = queue.parent or ROOT
        if parent in by_name:
            graph.add_edge(parent, queue.name)
        else:
            problems.append(HierarchyProblem(queue, f"queue {queue.name!r} has parent {parent!r}, "
                                             "which is not a queue"))
    problems.extend(_cycle_problems(graph, by_name))
    order = list(by_name)
    problems.sort(key=lambda p: order.index(p.queue.name))
    paths = nx.single_source_shortest_path(graph, ROOT) if ROOT in by_name else {}
    return QueueTree(graph, by_name, tuple(problems), paths)


def _cycle_problems(graph: nx.DiGraph, by_name: dict[str, Queue]) -> list[HierarchyProblem]:
    """One problem per cycle, named after its first queue in the order the queues were given."""
    import networkx as nx

    order = {name: i for i, name in enumerate(by_name)}
    out = []
    for cycle in nx.simple_cycles(graph):
        start = min(range(len(cycle)), key=lambda i: order[cycle[i]])
        ring = cycle[start:] + cycle[:start]
        # simple_cycles walks parent -> child; a user reads the chain child -> parent.
        chain = " -> ".join([ring[0]] + list(reversed(ring[1:])) + [ring[0]])
        out.append(HierarchyProblem(by_name[ring[0]], f"queue {ring[0]!r} is its own ancestor: "
                                    f"spec.parent links {chain}"))
    return out
