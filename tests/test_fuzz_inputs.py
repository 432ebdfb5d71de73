"""Property-based fuzzing of cluster documents, session bodies and bundle archives (issue 8, section 7).

A small budget on every run (a few seconds); `python benchmarks/fuzz_inputs.py` runs the same
properties far longer (docs/robustness.md has its figures).
"""

from __future__ import annotations

import pytest
from fuzz_properties import PROPERTIES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

BUDGET = settings(max_examples=25, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("name", list(PROPERTIES))
def test_no_input_crashes_or_hangs(name):
    check, strategies = PROPERTIES[name]

    @BUDGET
    @given(st.tuples(*strategies))
    def holds(args):
        check(*args)
    holds()
