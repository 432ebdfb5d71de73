"""select_best is Volcano's SelectBestNodeAndScore (scheduler_helper_test.go TestSelectBestNode):
the node with the highest score, scores below zero included; none for no node.  Among tied best
nodes Volcano picks at random, fumarole the first in order (docs/stdlib.md), one of Volcano's
choices."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from fumarole.runtime.api.model import Node
from fumarole.runtime.api.resource import Resource
from fumarole.runtime.framework.scheduler_helper import select_best

NO_OBSERVER = SimpleNamespace(observer=None)


def _node(name: str) -> Node:
    return Node(name, Resource(), Resource(), {}, {}, {}, [], False, [])


@pytest.mark.parametrize("scores, volcano_may_pick, first", [
    ({"node1": 1.0, "node2": 1.0, "node3": 2.0, "node4": 2.0}, {"node3", "node4"}, "node3"),
    ({"node1": 1.0, "node2": 1.0, "node3": 3.0, "node4": 2.0, "node5": 2.0}, {"node3"}, "node3"),
    ({"node1": -5.0, "node2": -5.0, "node3": -10.0, "node4": -8.0, "node5": -8.0}, {"node1", "node2"}, "node1"),
])
def test_upstream_select_best_node(scores, volcano_may_pick, first):
    """TestSelectBestNode cases 0, 1 and 3 (the nodes in the order the test lists them)."""
    nodes = {_node(name): score for name, score in scores.items()}
    best = select_best(NO_OBSERVER, nodes)
    assert best.name == first and best.name in volcano_may_pick


def test_upstream_select_best_node_of_no_node():
    """TestSelectBestNode case 2: no scored node, no node."""
    assert select_best(NO_OBSERVER, {}) is None


def test_ties_go_to_the_first_in_order():
    """The documented choice among ties, whatever the order the nodes come in."""
    a, b = _node("a"), _node("b")
    assert select_best(NO_OBSERVER, {b: 7.0, a: 7.0}) is b
    assert select_best(NO_OBSERVER, {a: 7.0, b: 7.0}) is a
