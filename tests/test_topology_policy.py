"""The topology-manager policies of numa-aware (module ``topology_policy``, policies/volcano/lib):
the table tests of Volcano's plugins/numaaware/policy/policy_*_test.go, called on ``merged_hint``.

Upstream merges the hints of two providers (``cpu`` and ``gpu``); Volcano's plugin registers only
the CPU manager's provider, so no session can hand the merge two lists (the scenarios under
tests/conformance/cases/plugins/numa-aware run the single-provider merge).  Every upstream case
uses a machine of NUMA nodes 0 and 1 and checks the best hint alone; the admissions asserted
beside it are each policy's canAdmitPodResult.
"""

from __future__ import annotations

import pytest

from fumarole.runtime.bundles.library import standard_library

NUMA_NODES = [0, 1]


@pytest.fixture(scope="module")
def policy():
    return standard_library().modules["topology_policy"].instantiate(None, None, {})


def hints(*pairs: tuple[bool, list[int]]) -> list[list[int]]:
    """Hints written as (preferred, NUMA node ids), in the module's encoding."""
    return [[1 if preferred else 0, *ids] for preferred, ids in pairs]


ANY_OR_0 = hints((False, [0, 1]), (True, [0]))
ANY_OR_1 = hints((False, [0, 1]), (True, [1]))
ANY_OR_0_OR_1 = hints((False, [0, 1]), (True, [0]), (True, [1]))
BOTH_PREFERRED = hints((True, [0, 1]))

# The six providersHints of policy_best_effort_test.go and policy_restricted_test.go (the first
# five also open policy_single_numa_node_test.go): [cpu hints, gpu hints].
PROVIDERS = {
    "test-1": [ANY_OR_0, ANY_OR_0],
    "test-2": [ANY_OR_1, ANY_OR_1],
    "test-3": [ANY_OR_0_OR_1, ANY_OR_0_OR_1],
    "test-4": [ANY_OR_0, ANY_OR_1],
    "test-5": [ANY_OR_0, BOTH_PREFERRED],
    "test-6": [BOTH_PREFERRED, BOTH_PREFERRED],
}

# best-effort and restricted pick the same best hint (they differ in what they admit).
BEST_EFFORT_OR_RESTRICTED = {
    "test-1": (True, [0]),
    "test-2": (True, [1]),
    "test-3": (True, [0]),
    "test-4": (False, [0]),  # no preferred pair agrees: the narrowest, lowest unpreferred merge
    "test-5": (True, [0]),
    "test-6": (True, [0, 1]),
}

# single-numa-node drops unpreferred hints and hints of two NUMA nodes before merging: a provider
# left with none gives no merge at all, so the default (every NUMA node, unpreferred) stands.
SINGLE_NUMA_NODE = {
    "test-1": (True, [0]),
    "test-2": (True, [1]),
    "test-3": (True, [0]),
    "test-4": (False, [0, 1]),
    "test-5": (False, [0, 1]),
}


def _best(policy, name: str, providers: list[list[list[int]]]) -> tuple[bool, list[int]]:
    best = policy["merged_hint"](name, NUMA_NODES, providers)
    return policy["preferred"](best), policy["affinity"](best)


@pytest.mark.parametrize("case", list(BEST_EFFORT_OR_RESTRICTED))
def test_best_effort_predicate(policy, case):
    """policy_best_effort_test.go Test_best_effort_predicate: best-effort admits any hint."""
    best = _best(policy, "best-effort", PROVIDERS[case])
    assert best == BEST_EFFORT_OR_RESTRICTED[case]
    assert policy["admits"]("best-effort", policy["hint_of"](*best)) is True


@pytest.mark.parametrize("case", list(BEST_EFFORT_OR_RESTRICTED))
def test_restricted_predicate(policy, case):
    """policy_restricted_test.go Test_restricted_predicate: restricted admits a preferred hint only."""
    best = _best(policy, "restricted", PROVIDERS[case])
    assert best == BEST_EFFORT_OR_RESTRICTED[case]
    assert policy["admits"]("restricted", policy["hint_of"](*best)) is best[0]


@pytest.mark.parametrize("case", list(SINGLE_NUMA_NODE))
def test_single_numa_node_predicate(policy, case):
    """policy_single_numa_node_test.go Test_single_numa_node_predicate."""
    best = _best(policy, "single-numa-node", PROVIDERS[case])
    assert best == SINGLE_NUMA_NODE[case]
    assert policy["admits"]("single-numa-node", policy["hint_of"](*best)) is best[0]


def test_none_predicate(policy):
    """policy_none_test.go Test_none_predicate: no provider hints, the empty hint (no NUMA
    affinity, not preferred), admitted."""
    assert _best(policy, "none", []) == (False, [])
    assert policy["admits"]("none", policy["merged_hint"]("none", NUMA_NODES, [])) is True
