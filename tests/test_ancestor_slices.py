"""capacity's queue ancestors as Go slices (runtime/ingest/go_slices.py, queue_tree.py): the
backing arrays Volcano's ``append`` shares, and the lists a tree 7 or more levels deep shows
because of it.  The decision it changes is pinned by the authored conformance case
plugins/capacity/authored-hierarchy-007-a-leaf-check-rewrites-a-cousins-ancestors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fumarole.runtime.ingest.go_slices import DOUBLING_LIMIT, EMPTY, SliceArena
from fumarole.runtime.ingest.kube_convert import queue_from_object
from fumarole.runtime.ingest.queue_tree import build_queue_tree

CHAIN = [("l1", "root"), ("l2", "l1"), ("l3", "l2"), ("l4", "l3"), ("x", "l4")]  # x: 5 levels below root


def _tree(links: list[tuple[str, str]]):
    objects = [{"kind": "Queue", "metadata": {"name": "root"}, "spec": {}}]
    objects += [{"kind": "Queue", "metadata": {"name": name}, "spec": {"parent": parent}} for name, parent in links]
    tree = build_queue_tree([queue_from_object(obj) for obj in objects])
    return tree, {q.name: q for q in tree.queues.values()}


def _names(queues) -> list[str]:
    return [q.name for q in queues]


def test_append_doubles_the_capacity_and_writes_in_place_while_there_is_room():
    arena = SliceArena()
    views = [EMPTY]
    for i in range(5):
        views.append(arena.append(views[-1], f"q{i}")[0])
    # capacities 1, 2, 4, 4 (in place), 8: the arrays of the views of lengths 3 and 4 are one
    assert [v[1] for v in views] == [0, 1, 2, 3, 4, 5]
    assert views[3][0] == views[4][0] and len({v[0] for v in views[1:]}) == 4
    sibling, overwritten = arena.append(views[3], "other")  # writes index 3 of the shared array
    assert overwritten and arena.items(views[4]) == ["q0", "q1", "q2", "other"]
    assert arena.append(views[3], "other") == (sibling, False)  # the same value again changes nothing


def test_growth_past_the_doubling_limit_is_refused():
    arena = SliceArena()
    view = EMPTY
    for i in range(DOUBLING_LIMIT):
        view = arena.append(view, str(i))[0]
    with pytest.raises(ValueError, match="not modelled"):
        arena.append(view, "one more")


def test_cousins_seven_levels_deep_share_the_parent_built_last():
    """z1 under y1 and z2 under y2, both under x: their lists are one array, whose index 6 holds the
    parent of the cousin built last (the order given here; a Go map's in Volcano)."""
    tree, q = _tree(CHAIN + [("y1", "x"), ("y2", "x"), ("z1", "y1"), ("z2", "y2")])
    assert _names(tree.ancestors(q["z1"]))[-1] == "y2" and _names(tree.ancestors(q["z2"]))[-1] == "y2"
    tree, q = _tree(CHAIN + [("y1", "x"), ("y2", "x"), ("z2", "y2"), ("z1", "y1")])
    assert _names(tree.ancestors(q["z1"]))[-1] == "y1" and _names(tree.ancestors(q["z2"]))[-1] == "y1"


def test_a_leaf_check_six_levels_deep_rewrites_its_cousins_parent():
    tree, q = _tree(CHAIN + [("y", "x"), ("y2", "x"), ("z", "y2")])
    assert _names(tree.ancestors(q["z"]))[-1] == "y2"
    assert _names(tree.append_self(q["y"])) == ["root", "l1", "l2", "l3", "l4", "x", "y"]
    assert _names(tree.ancestors(q["z"])) == ["root", "l1", "l2", "l3", "l4", "x", "y"]
    tree.append_self(q["y2"])
    assert _names(tree.ancestors(q["z"]))[-1] == "y2"


@st.composite
def _trees(draw) -> list[tuple[str, str]]:
    """Up to 14 queues, each under root or an earlier one: trees up to 14 levels deep."""
    links: list[tuple[str, str]] = []
    for i in range(draw(st.integers(1, 14))):
        links.append((f"q{i}", draw(st.sampled_from(["root"] + [name for name, _ in links]))))
    return links


@settings(max_examples=60, deadline=None)
@given(_trees(), st.lists(st.integers(0, 13), max_size=10), st.randoms(use_true_random=False))
def test_only_queues_seven_levels_deep_or_more_may_list_another_parent(links, checks, rng):
    """Whatever the build order and the checks made: each list is as long as the queue is deep, and
    its first six items -- every item of a queue less than 7 levels deep -- are the true ones."""
    rng.shuffle(links)
    tree, q = _tree(links)
    parent = dict(links)
    for i in checks:
        if f"q{i}" in q:
            tree.append_self(q[f"q{i}"])
    for name in parent:
        truth = [name]
        while truth[-1] != "root":
            truth.append(parent[truth[-1]])
        truth = truth[:0:-1]
        shown = _names(tree.ancestors(q[name]))
        assert len(shown) == len(truth) and shown[:6] == truth[:6]
        if len(truth) < 7:
            assert shown == truth
