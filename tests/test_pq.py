"""The priority queue must pop in Go's container/heap order, even for comparators that tie."""

from fumarole.runtime.framework.priority_queue import PriorityQueue


def test_pops_in_order():
    pq = PriorityQueue(lambda a, b: a < b, [5, 1, 4, 2, 3])
    assert [pq.pop() for _ in range(5)] == [1, 2, 3, 4, 5]


def test_ties_follow_go_heap_layout():
    # All items compare equal on the key: Go's heap pops 'a' (the root) and then
    # moves the last item to the root; a Python heapq would differ.
    items = [("a", 0), ("b", 0), ("c", 0), ("d", 0)]
    pq = PriorityQueue(lambda x, y: x[1] < y[1], items)
    assert [pq.pop()[0] for _ in range(4)] == ["a", "d", "c", "b"]


def test_comparator_reads_live_state():
    share = {"q1": 0.0, "q2": 0.5}
    pq = PriorityQueue(lambda a, b: share[a] < share[b], ["q1", "q2"])
    first = pq.pop()
    share["q1"] = 1.0
    pq.push(first)
    assert pq.pop() == "q2"
