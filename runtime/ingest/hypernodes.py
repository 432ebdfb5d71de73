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
from fumarole.runtime.ingest.kube_convert import ObjectReader
from fumarole.runtime.ingest.parent_links import cycles, starting_at
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


def _member(name: str, members: list, index: int, reader: ObjectReader) -> Member | None:
    """``members[index]`` of HyperNode ``name`` as a member; None, reported, when it is not one."""
    entry, file = members[index], reader.file
    if not isinstance(entry, dict):
        reader.report(kube_errors.member_not_a_mapping(file, reader.at(members, index), name, index))
        return None
    kind = entry.get("type")
    if kind not in MEMBER_TYPES:
        at = reader.at(entry, "type" if "type" in entry else None)
        reader.report(kube_errors.member_type_unknown(file, at, name, index, kind))
        return None
    selector = entry.get("selector")
    if not isinstance(selector, dict):
        at = reader.at(entry, "selector" if "selector" in entry else None)
        reader.report(kube_errors.member_selector_not_a_mapping(file, at, name, index))
        return None
    exact = selector.get("exactMatch")
    regex = selector.get("regexMatch")
    labels = selector.get("labelMatch")
    given = [k for k, v in (("exactMatch", exact), ("regexMatch", regex), ("labelMatch", labels)) if v is not None]
    if len(given) != 1:
        reader.report(kube_errors.member_selectors_not_one(file, reader.at(entry, "selector"), name, index, given))
        return None
    if exact is not None:
        exact_name = exact.get("name") if isinstance(exact, dict) else None
        if not isinstance(exact_name, str) or not exact_name:
            reader.report(kube_errors.exact_match_without_name(file, reader.at(selector, "exactMatch"), name, index))
            return None
        return Member(str(kind), exact=exact_name)
    if kind == "HyperNode":
        reader.report(kube_errors.hyper_node_member_not_exact(file, reader.at(selector, given[0]), name, index))
        return None
    if regex is not None:
        pattern = regex.get("pattern") if isinstance(regex, dict) else None
        if not isinstance(pattern, str):
            at = reader.at(regex, "pattern") if isinstance(regex, dict) and "pattern" in regex \
                else reader.at(selector, "regexMatch")
            reader.report(kube_errors.regex_match_without_pattern(file, at, name, index))
            return None
        try:
            compile_go_regexp(pattern)
        except PatternError as exc:
            reader.report(kube_errors.regex_match_refused(file, reader.at(regex, "pattern"), name, index, exc))
            return None
        return Member("Node", regex=pattern)
    if not isinstance(labels, dict):
        reader.report(kube_errors.label_match_not_a_selector(file, reader.at(selector, "labelMatch"), name, index))
        return None
    return Member("Node", labels=labels)


def hyper_node_spec(obj: dict, reader: ObjectReader) -> HyperNodeSpec | None:
    """The HyperNode object as a spec; None, and its problems reported to ``reader``, when it is not one."""
    spec = obj.get("spec")
    name, file = obj["metadata"]["name"], reader.file
    if not isinstance(spec, dict):
        at = reader.at(obj, "spec" if "spec" in obj else None)
        reader.report(kube_errors.hyper_node_without_spec(file, at, name))
        return None
    tier = spec.get("tier")
    if not isinstance(tier, int) or isinstance(tier, bool) or tier < 0:
        at = reader.at(spec, "tier" if "tier" in spec else None)
        reader.report(kube_errors.field_mistyped(file, at, "spec.tier", f"HyperNode {name}", "a non-negative integer",
                                                 tier))
        return None
    raw_members = spec.get("members") or []
    if not isinstance(raw_members, list):
        reader.report(kube_errors.hyper_node_members_not_a_list(file, reader.at(spec, "members"), name))
        return None
    members = [_member(name, raw_members, i, reader) for i in range(len(raw_members))]
    if any(m is None for m in members):
        return None
    return HyperNodeSpec(str(name), tier, str(spec.get("tierName") or ""), tuple(members), obj)  # type: ignore[arg-type]


def hyper_node_specs(objs: list[dict], reader: ObjectReader) -> list[HyperNodeSpec]:
    """The HyperNode objects that are valid, as specs; ``reader`` gets the others' problems."""
    return [spec for spec in (hyper_node_spec(obj, reader) for obj in objs) if spec]


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
    # Each cycle is reported at its least name, where its ring starts.
    rings = {min(ring): starting_at(ring, min(ring)) for ring in cycles(parent, by_name)}
    for spec in specs:
        if spec.name in rings:
            line, col = _member_position(by_name[parent[spec.name]], spec.name)
            out.append(kube_errors.hyper_node_cycle(file, Span(line, col), spec.name, [*rings[spec.name], spec.name]))
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
