"""Every scenario under tests/scenarios/ (upstream-derived and authored), through the same
code path as `fumarole test`."""

from __future__ import annotations

from pathlib import Path

import pytest
from fumarole.runtime.authoring.scenario import run_file, scenario_files

SCENARIOS = Path(__file__).parent / "scenarios"
FILES = scenario_files([SCENARIOS]) if SCENARIOS.exists() else []


@pytest.mark.parametrize("engine", ["fast", "reference"])
@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(SCENARIOS)) for p in FILES])
def test_scenario(path: Path, engine: str):
    outcome = run_file(path, engine=engine)
    assert outcome.passed, outcome.difference
