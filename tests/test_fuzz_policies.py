"""Fuzzing the policy front door (issue 8, section 4): a diagnostic with a position, or a clean
compile and a session that ends, in bounded time; never a crash, a hang or an escape.

A few seconds here; the longer run is ``python -m tests.policy_fuzz`` (docs/language.md).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.policy_fuzz import generated_policy, mutated_shipped, outcome

FUZZ = settings(max_examples=10, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("source", [generated_policy, mutated_shipped], ids=["generated", "mutated-shipped"])
def test_policies_get_a_diagnostic_or_run(source):
    @FUZZ
    @given(st.randoms(use_true_random=False))
    def check(rng):
        file, text = source(rng)
        result = outcome(file, text)
        assert result.kind != "FAILURE", f"{file}: {result.detail}\n{text}"

    check()
