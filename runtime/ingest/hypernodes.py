"""HyperNodes (``topology.volcano.sh/v1alpha1``): the network topology tree read from a cluster dump.

Volcano's HyperNode cache (``pkg/scheduler/api/hyper_node_info.go``) links each
HyperNode to the HyperNodes its ``spec.members`` name (``type: HyperNode``,
by exact name only) and collects the real nodes under it (``type: Node``, by
exact name, regular expression or label selector).  Volcano refuses to
schedule network-topology jobs while that cache is broken (a cycle, a
HyperNode claimed by two parents); fumarole reports the same problems, and a
HyperNode member that names no HyperNode of the dump, as cluster errors with
their place in the file, so a session never runs on a half-built tree.

This module checks the objects, the HyperNode-to-HyperNode links and the
members naming nothing of the cluster, for the cluster reader (``kube.py``),
which calls in and is never called back; which real nodes a member selects
is resolved per session against the session's nodes
(``runtime/framework/topology.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from fumarole.policy_lang.diagnostics import Diagnostic, Span
from fumarole.runtime.api.go_regexp import PatternError, compile_go_regexp
from fumarole.runtime.ingest import kube_errors
from fumarole.runtime.ingest.yamlpos import position, walk_path

MEMBER_TYPES = ("Node", "HyperNode")


@dataclass(frozen=True)
class Member:
    """One ``spec.members`` entry: exactly one of ``exact``, ``regex``, ``labels`` is set."""

    type: str
    exact: str = ""
    regex: str = ""
    labels: dict | None = None  # a metav1.LabelSelector as written


@dataclass(frozen=True)
class HyperNodeSpec:
    """A validated HyperNode object: name, tier, tier name and members, in spec order."""

    name: str
    tier: int
    tier_name: str
    members: tuple[Member, ...]
    raw: dict

    @property
    def child_names(self) -> list[str]:
        return [m.exact for m in self.members if m.type == "HyperNode" and m.exact]


def _member(entry: object, owner: dict, index: int, fail) -> Member | None:
    where = f"HyperNode {owner['metadata']['name']} spec.members[{index}]"
    if not isinstance(entry, dict):
        fail("K004", f"{where} must be a mapping with type and selector", owner)
        return None
    kind = entry.get("type")
    if kind not in MEMBER_TYPES:
        fail("K004", f"{where}.type must be Node or HyperNode, not {kind!r}", entry, "type" if "type" in entry else None)
        return None
    selector = entry.get("selector")
    if not isinstance(selector, dict):
        fail("K004", f"{where}.selector must be a mapping (exactMatch, regexMatch or labelMatch)", entry,
             "selector" if "selector" in entry else None)
        return None
    exact = selector.get("exactMatch")
    regex = selector.get("regexMatch")
    labels = selector.get("labelMatch")
    given = [k for k, v in (("exactMatch", exact), ("regexMatch", regex), ("labelMatch", labels)) if v is not None]
    if len(given) != 1:
        fail("K004", f"{where}.selector needs exactly one of exactMatch, regexMatch, labelMatch "
             f"(got {', '.join(given) or 'none'})", entry, "selector")
        return None
    if exact is not None:
        name = exact.get("name") if isinstance(exact, dict) else None
        if not isinstance(name, str) or not name:
            fail("K004", f"{where}.selector.exactMatch needs a name", selector, "exactMatch")
            return None
        return Member(str(kind), exact=name)
    if kind == "HyperNode":
        fail("K004", f"{where}: a HyperNode member is selected by exactMatch only", selector, given[0])
        return None
    if regex is not None:
        pattern = regex.get("pattern") if isinstance(regex, dict) else None
        if not isinstance(pattern, str):
            fail("K004", f"{where}.selector.regexMatch needs a pattern (a string)", *(
                (regex, "pattern") if isinstance(regex, dict) and "pattern" in regex else (selector, "regexMatch")))
            return None
        try:
            compile_go_regexp(pattern)
        except PatternError as exc:
            fail("K004", f"{where}.selector.regexMatch.pattern is not a regular expression Volcano accepts: {exc}",
                 regex, "pattern")
            return None
        return Member("Node", regex=pattern)
    if not isinstance(labels, dict):
        fail("K004", f"{where}.selector.labelMatch must be a label selector", selector, "labelMatch")
        return None
    return Member("Node", labels=labels)


def hyper_node_spec(obj: dict, fail) -> HyperNodeSpec | None:
    """The HyperNode object as a spec; ``fail(code, message, where, key)`` reports problems."""
    spec = obj.get("spec")
    name = obj["metadata"]["name"]
    if not isinstance(spec, dict):
        fail("K004", f"HyperNode {name} has no spec", obj, "spec" if "spec" in obj else None)
        return None
    tier = spec.get("tier")
    if not isinstance(tier, int) or isinstance(tier, bool) or tier < 0:
        fail("K007", f"spec.tier of HyperNode {name} must be a non-negative integer, not {tier!r}", spec,
             "tier" if "tier" in spec else None)
        return None
    raw_members = spec.get("members") or []
    if not isinstance(raw_members, list):
        fail("K007", f"spec.members of HyperNode {name} must be a list", spec, "members")
        return None
    members = [_member(entry, obj, i, fail) for i, entry in enumerate(raw_members)]
    if any(m is None for m in members):
        return None
    return HyperNodeSpec(str(name), tier, str(spec.get("tierName") or ""), tuple(members), obj)  # type: ignore[arg-type]


def hyper_node_specs(objs: list[dict], fail) -> list[HyperNodeSpec]:
    """The HyperNode objects that are valid, as specs; ``fail`` reports the others' problems."""
    return [spec for spec in (hyper_node_spec(obj, fail) for obj in objs) if spec]


def _member_position(owner: HyperNodeSpec, child: str) -> tuple[int, int]:
    for i, member in enumerate(owner.members):
        if member.type == "HyperNode" and member.exact == child:
            return walk_path(owner.raw, iter(("spec", "members", i)))
    return position(owner.raw)


def tree_problems(specs: list[HyperNodeSpec], file: str) -> list[Diagnostic]:
    """What keeps Volcano's HyperNode cache from being ready: a HyperNode claimed by two
    parents (K111), a cycle of members (K113).  A member naming no HyperNode is not one of
    them (:func:`hyper_node_warnings`)."""
    by_name = {s.name: s for s in specs}
    out: list[Diagnostic] = []
    parent: dict[str, str] = {}
    for spec in specs:
        for child in spec.child_names:
            if child in parent and parent[child] != spec.name:
                line, col = _member_position(spec, child)
                out.append(kube_errors.hyper_node_two_parents(file, Span(line, col), child, parent[child], spec.name))
            else:
                parent[child] = spec.name
    for spec in specs:
        seen = [spec.name]
        current = parent.get(spec.name)
        while current is not None and current not in seen:
            seen.append(current)
            current = parent.get(current)
        if current == spec.name and spec.name == min(seen):
            cycle = " -> ".join(seen + [spec.name])
            line, col = _member_position(by_name[parent[spec.name]], spec.name)
            out.append(kube_errors.hyper_node_cycle(file, Span(line, col), spec.name, cycle))
    return out


def hyper_node_warnings(specs: list[HyperNodeSpec], node_names: set[str], file: str) -> list[Diagnostic]:
    """What is legal but worth telling about the HyperNodes of a cluster: members naming a node
    (K104) or a HyperNode (K112) the cluster does not have."""
    return _missing_node_members(specs, node_names, file) + _missing_hyper_node_members(specs, file)


def _missing_node_members(specs: list[HyperNodeSpec], node_names: set[str], file: str) -> list[Diagnostic]:
    """A node member naming no node of the dump is legal (Volcano keeps only the nodes it
    knows), but worth telling: the HyperNode is smaller than it says."""
    out = []
    for spec in specs:
        for i, member in enumerate(spec.members):
            if member.type == "Node" and member.exact and member.exact not in node_names:
                line, col = walk_path(spec.raw, iter(("spec", "members", i)))
                out.append(kube_errors.hyper_node_member_node_missing(file, Span(line, col), spec.name, member.exact))
    return out


def _missing_hyper_node_members(specs: list[HyperNodeSpec], file: str) -> list[Diagnostic]:
    """A HyperNode member naming no HyperNode of the dump (K112, a warning): Volcano's cache
    adds an empty placeholder HyperNode of that name under the parent (hyper_node_info.go
    addChild) and schedules on, so fumarole does the same (runtime/framework/topology.py)."""
    names = {s.name for s in specs}
    out: list[Diagnostic] = []
    for spec in specs:
        for child in spec.child_names:
            if child not in names:
                line, col = _member_position(spec, child)
                out.append(kube_errors.hyper_node_member_missing(file, Span(line, col), spec.name, child))
    return out
