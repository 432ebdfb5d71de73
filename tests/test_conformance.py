"""Every conformance scenario, through the same code path as `fumarole test`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fumarole.runtime.authoring.scenario import run_file, scenario_files

CASES = Path(os.environ.get("FUMAROLE_CONFORMANCE", Path(__file__).parent / "conformance" / "cases"))
FILES = scenario_files([CASES]) if CASES.exists() else []


def test_cases_are_there():
    assert len(FILES) >= 100, f"expected the conformance scenarios under {CASES}"


@pytest.mark.parametrize("engine", ["fast", "reference"])
@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(CASES)) for p in FILES])
def test_case(path: Path, engine: str):
    outcome = run_file(path, engine=engine)
    assert outcome.passed, outcome.difference


def test_summary_line(cli):
    result = cli("test", str(CASES / "enqueue"), str(CASES / "allocate"))
    assert result.out.strip().splitlines()[-1].endswith("failed")
    assert result.out.strip().splitlines()[-1].startswith(tuple("0123456789"))
