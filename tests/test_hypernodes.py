"""HyperNodes: what the cluster reader refuses, and the tree a session builds from them."""

from __future__ import annotations

import pytest
from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.framework.topology import CLUSTER_TOP, Topology
from fumarole.runtime.ingest.kube import load_cluster


def hyper_node(name: str, tier: int, members: list[str], kind: str = "HyperNode", tier_name: str = "") -> str:
    lines = [f"apiVersion: topology.volcano.sh/v1alpha1", "kind: HyperNode", f"metadata: {{name: {name}}}",
             "spec:", f"  tier: {tier}"]
    if tier_name:
        lines.append(f"  tierName: {tier_name}")
    lines.append("  members:" if members else "  members: []")
    lines += [f"  - {{type: {kind}, selector: {{exactMatch: {{name: {m}}}}}}}" for m in members]
    return "\n".join(lines)


def node(name: str, labels: str = "{}") -> str:
    return (f"apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {labels}}}\n"
            "status: {allocatable: {cpu: '2', memory: 4Gi, pods: '10'}}")


def codes_and_lines(text: str) -> list[tuple[str, int]]:
    with pytest.raises(FumaroleError) as info:
        load_cluster(text, "cluster.yaml")
    return [(d.code, d.span.line) for d in info.value.diagnostics]


def test_a_member_hyper_node_that_does_not_exist_is_a_k112_warning_at_the_member():
    cluster = load_cluster(hyper_node("spine", 2, ["rack7"]), "cluster.yaml")
    assert [(d.code, d.severity, d.span.line, d.span.col) for d in cluster.warnings] == [("K112", "warning", 7, 5)]


def test_a_missing_member_hyper_node_claimed_by_two_parents_is_k111():
    text = "\n---\n".join([hyper_node("a", 2, ["ghost"]), hyper_node("b", 2, ["ghost"])])
    assert codes_and_lines(text) == [("K111", 15)]


def test_a_missing_member_becomes_an_empty_tier_0_placeholder_in_no_tier():
    text = "\n---\n".join([node("n1"), hyper_node("rack", 1, ["n1"], "Node"),
                           hyper_node("spine", 2, ["rack", "ghost"])])
    topology = topology_of(text)
    ghost, spine = topology.by_name["ghost"], topology.by_name["spine"]
    assert (ghost.tier, ghost.parent, ghost.children, ghost.nodes) == (0, spine, [], [])
    assert [h.name for h in spine.children] == ["rack", "ghost"]
    assert ghost in topology.list and topology.tiers == [1, 2, 3]


def test_a_hyper_node_with_two_parents_is_k111_at_the_second_claim():
    text = "\n---\n".join([hyper_node("rack", 1, ["n1"], "Node"), hyper_node("a", 2, ["rack"]),
                           hyper_node("b", 2, ["rack"])])
    assert codes_and_lines(text) == [("K111", 23)]


def test_a_cycle_is_reported_once_as_k113():
    text = "\n---\n".join([hyper_node("a", 1, ["b"]), hyper_node("b", 2, ["c"]), hyper_node("c", 3, ["a"])])
    with pytest.raises(FumaroleError) as info:
        load_cluster(text, "cluster.yaml")
    assert [(d.code, d.file, d.span.line, d.span.col, d.message) for d in info.value.diagnostics] == [
        ("K113", "cluster.yaml", 23, 5, "HyperNode a is its own ancestor (parent links a -> c -> b -> a)")]


def test_a_long_cycle_is_named_by_its_ends_and_the_links_it_skips():
    """One readable line however many HyperNodes the cycle holds."""
    text = "\n---\n".join(hyper_node(f"h{i:02}", i + 1, [f"h{(i - 1) % 20:02}"]) for i in range(20))
    with pytest.raises(FumaroleError) as info:
        load_cluster(text, "cluster.yaml")
    assert [d.message for d in info.value.diagnostics] == [
        "HyperNode h00 is its own ancestor (parent links h00 -> h01 -> h02 -> h03 -> (13 more) -> "
        "h17 -> h18 -> h19 -> h00)"]


@pytest.mark.parametrize("top_first", [False, True])
def test_a_chain_of_thousands_of_hyper_nodes_is_read_in_linear_time(top_first):
    """Each member link is followed once, with no recursion: 3,000 tiers given top first used to
    exceed Python's recursion limit, and checking them for cycles took cubic time."""
    chain = [hyper_node("h0", 1, ["n1"], "Node")] + [hyper_node(f"h{i}", i + 1, [f"h{i - 1}"]) for i in range(1, 3000)]
    topology = topology_of("\n---\n".join([node("n1")] + (chain[::-1] if top_first else chain)))
    assert [n.name for n in topology.by_name["h2999"].nodes] == ["n1"]
    assert [h.name for h in topology.top.children] == ["h2999"]


def test_a_missing_node_member_is_only_a_warning():
    cluster = load_cluster(hyper_node("rack", 1, ["n9"], "Node"), "cluster.yaml")
    assert [d.code for d in cluster.warnings] == ["K104"]


def test_a_selector_with_two_matches_is_refused():
    text = ("apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: r}\nspec:\n  tier: 1\n"
            "  members:\n  - {type: Node, selector: {exactMatch: {name: n1}, regexMatch: {pattern: n.*}}}")
    assert codes_and_lines(text) == [("K004", 7)]


def topology_of(text: str) -> Topology:
    cluster = load_cluster(text, "cluster.yaml")
    nodes = list(cluster.snapshot().nodes.values())
    return Topology(cluster.hyper_nodes, nodes)


def test_the_tree_real_nodes_and_the_cluster_top():
    regex = ("apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: r2}\nspec:\n  tier: 1\n"
             "  tierName: rack\n  members:\n  - {type: Node, selector: {regexMatch: {pattern: '^b-'}}}")
    labels = ("apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: r3}\nspec:\n  tier: 1\n"
              "  members:\n  - {type: Node, selector: {labelMatch: {matchLabels: {zone: z3}}}}")
    text = "\n---\n".join([node("a-1"), node("b-1"), node("b-2"), node("c-1", "{zone: z3}"),
                           hyper_node("r1", 1, ["a-1"], "Node"), regex, labels, hyper_node("s", 2, ["r1", "r2"])])
    topology = topology_of(text)
    by = topology.by_name
    assert [n.name for n in by["r2"].nodes] == ["b-1", "b-2"]
    assert [n.name for n in by["r3"].nodes] == ["c-1"]
    assert [n.name for n in by["s"].nodes] == ["a-1", "b-1", "b-2"]
    assert by["r1"].parent is by["s"] and [c.name for c in by["s"].children] == ["r1", "r2"]
    top = topology.top
    assert top.name == CLUSTER_TOP and top.tier == 3 and [c.name for c in top.children] == ["r3", "s"]
    assert len(top.nodes) == 4 and topology.tiers == [1, 2, 3]
    assert topology.lca(by["r1"], by["r3"]) is top and topology.lca(by["r1"], by["r2"]) is by["s"]
    assert topology.tier_names == {"rack": 1}


def test_without_hyper_nodes_the_cluster_top_is_tier_one():
    topology = topology_of(node("n1"))
    assert [h.name for h in topology.list] == [CLUSTER_TOP] and topology.top.tier == 1


def test_run_shows_where_binds_and_jobs_landed(cli, root, tmp_path):
    import yaml

    case = root / "tests/conformance/cases/subgroup"
    doc = yaml.safe_load(next(case.glob("*-021-*.yaml")).read_text())
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": doc["objects"]}))
    (tmp_path / "scheduler.conf").write_text(yaml.safe_dump(doc["scheduler"]))
    result = cli("run", str(tmp_path / "cluster.yaml"), "--config", str(tmp_path / "scheduler.conf"))
    lines = result.out.splitlines()
    assert "  POD    NODE   HYPERNODE" in lines and "  c1/p1  s2-n5  s2" in lines
    assert any(line.split()[:4] == ["c1/pg1", "q1", "Inqueue", "s3"] for line in lines)


def regex_hyper_node(pattern: str) -> str:
    """A tier-1 HyperNode selecting nodes by ``pattern``, which sits on line 7, column 51."""
    return ("apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: r}\nspec:\n  tier: 1\n"
            f"  members:\n  - {{type: Node, selector: {{regexMatch: {{pattern: {pattern}}}}}}}")


def test_a_catastrophic_pattern_matches_long_names_in_linear_time():
    import time
    names = ["a" * 50_000 + "!", "a" * 40_000]
    text = "\n---\n".join([node(name) for name in names] + [regex_hyper_node("'^(a+)+$'")])
    started = time.perf_counter()
    topology = topology_of(text)
    assert [n.name for n in topology.by_name["r"].nodes] == ["a" * 40_000]
    assert time.perf_counter() - started < 5


def test_patterns_match_as_go_regexp_does_ascii_classes_and_an_unanchored_search():
    # Go: \d is [0-9] only (Python's re also takes U+0661), and MatchString searches anywhere in the name
    text = "\n---\n".join([node("rack-1"), node("rack-\u0661"), node("x-rack-2"), regex_hyper_node(r"'rack-\d'")])
    assert [n.name for n in topology_of(text).by_name["r"].nodes] == ["rack-1", "x-rack-2"]


@pytest.mark.parametrize("pattern, reason", [
    ("'('", "missing ): ("),
    ("'a**'", "bad repetition operator: **"),
    (r"'n\C'", "invalid escape sequence: \\C"),
    ("'a{1001}'", "invalid repetition size: {1001}"),
    ("'" + "a" * 1025 + "'", "the pattern is 1025 characters long; fumarole accepts at most 1024"),
])
def test_a_pattern_go_refuses_or_an_over_long_one_is_k004_at_the_pattern(pattern, reason):
    with pytest.raises(FumaroleError) as info:
        load_cluster(regex_hyper_node(pattern), "cluster.yaml")
    [d] = info.value.diagnostics
    assert (d.code, d.file, d.span.line, d.span.col) == ("K004", "cluster.yaml", 7, 51)
    assert "regexMatch.pattern is not a regular expression Volcano accepts" in d.message and reason in d.message


def test_a_pattern_that_is_not_a_string_is_k004():
    with pytest.raises(FumaroleError) as info:
        load_cluster(regex_hyper_node("[a]"), "cluster.yaml")
    assert [(d.code, d.span.line) for d in info.value.diagnostics] == [("K004", 7)]
    assert "regexMatch needs a pattern" in info.value.diagnostics[0].message


# -- restated from pkg/scheduler/api/hyper_node_info_test.go -------------------------------------

def label_hyper_node(name: str, selector: str) -> str:
    return (f"apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {{name: {name}}}\nspec:\n"
            f"  tier: 1\n  members:\n  - {{type: Node, selector: {{labelMatch: {selector}}}}}")


@pytest.mark.parametrize("selector, expected", [
    ("{matchLabels: {role: worker}}", ["node1"]),                                   # MatchLabels success
    ("{matchLabels: {role: invalid-role}}", []),                                    # MatchLabels failure
    ("{}", []),                                                                     # neither labels nor expressions
    ("{matchExpressions: [{key: role, operator: In, values: [worker]}]}", ["node1"]),
    ("{matchExpressions: [{key: role, operator: In, values: [invalid-role]}]}", []),
    ("{matchExpressions: [{key: role, operator: NotIn, values: [master]}]}", ["node1", "node3"]),
    ("{matchExpressions: [{key: role, operator: Exists}]}", ["node1", "node2"]),
    ("{matchExpressions: [{key: role, operator: DoesNotExist}]}", ["node3"]),
    # LabelSelectorAsSelector refuses these (labels.NewRequirement), and GetMembers then keeps no node
    ("{matchExpressions: [{key: role, operator: NotIn, values: []}]}", []),
    ("{matchExpressions: [{key: role, operator: Exists, values: [worker]}]}", []),
    ("{matchExpressions: [{key: 'bad key', operator: DoesNotExist}]}", []),
    ("{matchExpressions: [{key: role, operator: NotIn, values: ['not a value']}]}", []),
])
def test_get_members_by_label(selector, expected):
    """TestGetMembers (its 'selector is nil' cases are the empty selector: the CRD needs one match)."""
    text = "\n---\n".join([node("node1", "{role: worker}"), node("node2", "{role: master}"), node("node3"),
                           label_hyper_node("s", selector)])
    assert [n.name for n in topology_of(text).by_name["s"].nodes] == expected


def test_node_regex_or_label_match_hyper_node():
    """TestHyperNodesInfo_NodeRegexOrLabelMatchHyperNode: which nodes each member selects (s2's and s3's
    regex HyperNode members, which Volcano skips, the cluster reader refuses: K004)."""
    regex = ("apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: s1}\nspec:\n  tier: 1\n"
             "  members:\n  - {type: Node, selector: {regexMatch: {pattern: '^prefix'}}}\n"
             "  - {type: Node, selector: {regexMatch: {pattern: node-2}}}")
    text = "\n---\n".join([node("node-0"), node("node-1"), node("node-2"), node("prefix-1"), node("not-match-prefix"),
                           node("node-5", "{role: worker}"), node("node-6", "{role: master}"),
                           hyper_node("s0", 1, ["node-0", "node-1"], "Node"), regex,
                           label_hyper_node("s4", "{matchLabels: {role: worker}}"),
                           label_hyper_node("s5", "{matchLabels: {role: invalid-role}}"),
                           label_hyper_node("s6", "{matchExpressions: [{key: role, operator: In, values: [master]}]}")])
    by = topology_of(text).by_name
    assert {name: [n.name for n in by[name].nodes] for name in ("s1", "s4", "s5", "s6")} == {
        "s1": ["node-2", "prefix-1"], "s4": ["node-5"], "s5": [], "s6": ["node-6"]}


def restated_tree() -> Topology:
    """The tree of TestHyperNodesInfo_UpdateHyperNode_Normal and _GetLeafNodes: s3 > s2 > {s1, s0}."""
    return topology_of("\n---\n".join([node(f"node-{i}") for i in range(4)] + [
        hyper_node("s2", 2, ["s1", "s0"]), hyper_node("s3", 3, ["s2"]),
        hyper_node("s0", 1, ["node-0", "node-1"], "Node"), hyper_node("s1", 1, ["node-2", "node-3"], "Node")]))


def test_update_hyper_node_normal_parents_real_nodes_and_tiers():
    """TestHyperNodesInfo_UpdateHyperNode_Normal, with s3 of _GetLeafNodes above s2."""
    by = restated_tree().by_name
    assert {n: by[n].parent.name for n in ("s0", "s1", "s2", "s3")} == {
        "s0": "s2", "s1": "s2", "s2": "s3", "s3": CLUSTER_TOP}
    assert {n: sorted(by[n].node_names) for n in ("s0", "s1", "s2")} == {
        "s0": ["node-0", "node-1"], "s1": ["node-2", "node-3"], "s2": ["node-0", "node-1", "node-2", "node-3"]}
    assert restated_tree().tiers == [1, 2, 3, 4]


def test_get_ancestors_and_lca():
    """TestHyperNodesInfo_GetAncestors (leaf, intermediate, root; the session adds the cluster top above
    the root) and TestGetLCAHyperNode (siblings, one an ancestor of the other, the same HyperNode;
    two HyperNodes of no common real ancestor meet at the cluster top)."""
    topology = topology_of("\n---\n".join([
        hyper_node("s0", 1, ["node-0"], "Node"), hyper_node("s1", 1, ["node-2"], "Node"),
        hyper_node("s4", 2, ["s0", "s1"]), hyper_node("s5", 3, ["s4"]), hyper_node("orphan", 1, ["node-8"], "Node")]))
    by = topology.by_name
    assert [h.name for h in by["s0"].ancestors] == ["s0", "s4", "s5", CLUSTER_TOP]
    assert [h.name for h in by["s4"].ancestors] == ["s4", "s5", CLUSTER_TOP]
    assert [h.name for h in by["s5"].ancestors] == ["s5", CLUSTER_TOP]
    assert topology.lca(by["s0"], by["s1"]) is by["s4"]
    assert topology.lca(by["s4"], by["s0"]) is by["s4"]
    assert topology.lca(by["s1"], by["s1"]) is by["s1"]
    assert topology.lca(by["s0"], by["orphan"]) is topology.top
    assert topology.lca(None, by["s0"]) is by["s0"] and topology.lca(by["s0"], None) is by["s0"]


def test_the_cycle_and_two_parents_of_the_upstream_tests_are_refused_and_their_corrections_read():
    """TestHyperNodesInfo_UpdateHyperNode_WithCycle and _MultipleParents: the cache is not ready with the
    first objects (here: K113, K111) and is ready, with the expected parents, after the correction."""
    nodes = [node("node-0"), node("node-1")]
    s0 = hyper_node("s0", 1, ["node-0", "node-1"], "Node")
    cycle = [s0, hyper_node("s1", 2, ["s0", "s3"]), hyper_node("s2", 3, ["s1"]), hyper_node("s3", 4, ["s2"])]
    assert [code for code, _ in codes_and_lines("\n---\n".join(nodes + cycle))] == ["K113"]
    fixed = topology_of("\n---\n".join(nodes + [s0, hyper_node("s1", 2, ["s0"])] + cycle[2:]))
    assert {n: fixed.by_name[n].parent.name for n in ("s0", "s1", "s2", "s3")} == {
        "s0": "s1", "s1": "s2", "s2": "s3", "s3": CLUSTER_TOP}
    assert all(sorted(fixed.by_name[n].node_names) == ["node-0", "node-1"] for n in ("s0", "s1", "s2", "s3"))
    two_parents = [s0, hyper_node("s1", 2, ["s0"]), hyper_node("s2", 3, ["s0"])]
    assert [code for code, _ in codes_and_lines("\n---\n".join(nodes + two_parents))] == ["K111"]
    fixed = topology_of("\n---\n".join(nodes + two_parents[:2] + [hyper_node("s2", 3, ["s1"])]))
    assert {n: fixed.by_name[n].parent.name for n in ("s0", "s1", "s2")} == {"s0": "s1", "s1": "s2", "s2": CLUSTER_TOP}
