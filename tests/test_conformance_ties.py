"""No conformance case rests on a tie Volcano breaks at random (tests/ties_to_the_last.py)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_every_case_passes_with_ties_to_the_last_node():
    cases = ROOT / "tests" / "conformance" / "cases"
    result = subprocess.run([sys.executable, "-m", "tests.ties_to_the_last", str(cases)], cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"cases whose outcome depends on a tie:\n{result.stdout}{result.stderr}"
