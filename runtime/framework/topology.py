"""The session's HyperNode tree (Volcano's ``ssn.HyperNodes``, ``RealNodesList``, ``HyperNodesTiers``).

At open Volcano copies the HyperNode cache into the session, adds a virtual
cluster-top HyperNode one tier above the highest real tier as the parent of
every HyperNode without one (``framework/session.go`` addClusterTopHyperNode),
rewrites each job's network topology so that allocate sees only hard mode
(adjustNetworkTopologySpec), and recovers where running jobs already are
(recoverAllocatedHyperNode).  This module is that framework plumbing: the
tree, its lowest common ancestors, and the open-time rewrites.  Choosing
HyperNodes for jobs is the allocate policy's and the network-topology-aware
plugin's business (``policies/volcano``).

Orders are deterministic where Volcano iterates Go maps: HyperNodes in the
order the cluster lists them, a HyperNode's children in the order its
members name them, the cluster top's children in HyperNode order, real
nodes in session node order (docs/hooks.md).
"""

from __future__ import annotations

from typing import Iterable

from fumarole.runtime.api.go_regexp import compile_go_regexp, go_match_string
from fumarole.runtime.api.labels import parse_selector, selects
from fumarole.runtime.api.model import ALLOCATED_STATUS, Job, Node
from fumarole.runtime.ingest.hypernodes import HyperNodeSpec, Member

CLUSTER_TOP = "<cluster-top-hypernode>"


class HyperNode:
    """One HyperNode of the session: tier, parent, children and the real nodes under it."""

    __slots__ = ("name", "tier", "tier_name", "parent", "children", "nodes", "node_names")

    def __init__(self, name: str, tier: int, tier_name: str = "") -> None:
        self.name = name
        self.tier = tier
        self.tier_name = tier_name
        self.parent: HyperNode | None = None
        self.children: list[HyperNode] = []
        self.nodes: list[Node] = []  # RealNodesList: the session's nodes under it
        self.node_names: frozenset[str] = frozenset()

    def __repr__(self) -> str:
        return f"<HyperNode {self.name} tier {self.tier}>"

    @property
    def ancestors(self) -> list["HyperNode"]:
        """GetAncestors: the HyperNode itself, then its parent, up to the cluster top."""
        out: list[HyperNode] = []
        current: HyperNode | None = self
        while current is not None and current not in out:
            out.append(current)
            current = current.parent
        return out


def _member_nodes(member: Member, nodes: list[Node]) -> set[str]:
    """GetMembers: the node names a Node member selects (an exact name is kept even if absent)."""
    if member.exact:
        return {member.exact}
    if member.regex:
        pattern = compile_go_regexp(member.regex)  # validated when the cluster was read
        return {n.name for n in nodes if go_match_string(pattern, n.name)}
    labels = member.labels or {}
    if not labels.get("matchLabels") and not labels.get("matchExpressions"):
        return set()
    selector = parse_selector(labels, strict=True)  # an invalid selector selects no node
    return {n.name for n in nodes if selects(selector, n.labels)}


class Topology:
    """Every HyperNode of a session, the cluster top included, and lookups over them."""

    def __init__(self, specs: Iterable[HyperNodeSpec], nodes: list[Node]) -> None:
        specs = list(specs)
        self.by_name: dict[str, HyperNode] = {s.name: HyperNode(s.name, s.tier, s.tier_name) for s in specs}
        self.tier_names: dict[str, int] = {}
        names: dict[str, set[str]] = {}
        placeholders: set[str] = set()
        for spec in specs:
            hyper_node = self.by_name[spec.name]
            if spec.tier_name:
                self.tier_names[spec.tier_name] = spec.tier  # the last HyperNode naming a tier wins
            for child in spec.child_names:
                if child not in self.by_name:
                    # addChild: a member naming no HyperNode becomes an empty placeholder
                    # (tier 0, no members, no nodes) that Volcano keeps in ssn.HyperNodes.
                    self.by_name[child] = HyperNode(child, 0)
                    placeholders.add(child)
                hyper_node.children.append(self.by_name[child])
                self.by_name[child].parent = hyper_node
        by_spec_name = {s.name: s for s in specs}
        for spec in specs:
            self._collect(spec.name, by_spec_name, nodes, names)
        top_tier = max([1] + [s.tier + 1 for s in specs])
        top = HyperNode(CLUSTER_TOP, top_tier)
        top.children = [h for h in self.by_name.values() if h.parent is None]
        for root in top.children:
            root.parent = top
        self.by_name[CLUSTER_TOP] = top
        names[CLUSTER_TOP] = {n.name for n in nodes}
        for name, hyper_node in self.by_name.items():
            members = names.get(name, set())
            hyper_node.nodes = [n for n in nodes if n.name in members]
            hyper_node.node_names = frozenset(n.name for n in hyper_node.nodes)
        self.list: list[HyperNode] = list(self.by_name.values())
        # HyperNodesTiers: placeholders are in no tier set (only real HyperNode objects are).
        self.tiers: list[int] = sorted({h.tier for h in self.list if h.name not in placeholders})
        self.top = top
        lowest = [h for h in self.list if h.tier == self.tiers[0]]
        self._lowest_of_node: dict[str, HyperNode] = {}
        for hyper_node in lowest:
            for node_name in hyper_node.node_names:
                self._lowest_of_node.setdefault(node_name, hyper_node)

    def _collect(self, name: str, specs: dict[str, HyperNodeSpec], nodes: list[Node],
                 out: dict[str, set[str]]) -> set[str]:
        """The node names under a HyperNode (the ingest checks rule out cycles).  Walked with a
        stack, children before their parent, so a chain of thousands of HyperNodes needs no
        recursion (a member already being walked, which only a cycle makes, adds nothing)."""
        stack, entered = [(name, False)], set()
        while stack:
            current, children_done = stack.pop()
            if current in out or (not children_done and current in entered):
                continue
            members = specs[current].members
            if not children_done:
                entered.add(current)
                stack.append((current, True))
                stack.extend((m.exact, False) for m in reversed(members)
                             if m.type != "Node" and m.exact in specs and m.exact not in out)
                continue
            found: set[str] = set()
            for member in members:
                if member.type == "Node":
                    found |= _member_nodes(member, nodes)
                elif member.exact in specs:
                    found |= out.get(member.exact, set())
            out[current] = found
        return out[name]

    def get(self, name: str) -> HyperNode | None:
        return self.by_name.get(name) if name else None

    def lca(self, left: HyperNode | None, right: HyperNode | None) -> HyperNode | None:
        """GetLCAHyperNode: the lowest common ancestor; either side none gives the other."""
        if left is None:
            return right
        if right is None:
            return left
        mine = set(map(id, left.ancestors))
        for ancestor in right.ancestors:
            if id(ancestor) in mine:
                return ancestor
        return None

    def lowest_of_node(self, node: Node) -> HyperNode | None:
        """FindHyperNodeForNode: the HyperNode of the lowest tier holding the node."""
        return self._lowest_of_node.get(node.name)

    # -- session open (framework/session.go) -------------------------------------------
    def adjust_network_topology(self, jobs: Iterable[Job]) -> None:
        """adjustNetworkTopologySpec: tier names become tiers; soft mode becomes hard mode up to the
        cluster top for the job, and up to the job's own limit for its sub-jobs."""
        for job in jobs:
            if not job.contains_network_topology:
                continue
            for topology in [job.network_topology] + [s.network_topology for s in job.sub_jobs.values()]:
                if (topology is not None and topology.highest_tier_allowed is None
                        and topology.highest_tier_name in self.tier_names):
                    topology.highest_tier_allowed = self.tier_names[topology.highest_tier_name]
                    topology.highest_tier_name = ""
            job_topology = job.network_topology
            if job_topology is not None:
                job_topology.convert_to_hard(self.top.tier)
            limit = self.top.tier
            if job_topology is not None and job_topology.highest_tier_allowed is not None:
                limit = job_topology.highest_tier_allowed
            for sub_job in job.sub_jobs.values():
                if sub_job.network_topology is not None:
                    sub_job.network_topology.convert_to_hard(limit)

    def recover_allocated(self, job: Job) -> None:
        """recoverAllocatedHyperNode: each sub-job with a network topology is where its allocated
        tasks are (the lowest-tier HyperNode holding all their nodes); the job is the LCA of those."""
        if not job.contains_network_topology:
            return
        for sub_job in job.sub_jobs.values():
            if sub_job.network_topology is None or sub_job.allocated_hyper_node:
                continue
            candidates: list[HyperNode] | None = None
            for task in (t for t in sub_job.tasks.values() if t.status in ALLOCATED_STATUS):
                if not task.node_name:
                    continue
                search = self.list if candidates is None else candidates
                candidates = [h for h in search if task.node_name in h.node_names]
                if not candidates:
                    break
            lowest = None
            for hyper_node in candidates or []:
                if lowest is None or hyper_node.tier < lowest.tier:
                    lowest = hyper_node
            sub_job.allocated_hyper_node = lowest
        common: HyperNode | None = None
        for sub_job in job.sub_jobs.values():
            if sub_job.allocated_hyper_node is not None:
                common = self.lca(common, sub_job.allocated_hyper_node)
                if common is None:
                    break
        job.allocated_hyper_node = common
