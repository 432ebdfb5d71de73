"""The package type-checks: the same mypy run CI starts with (.ci/typecheck), here too so that
every landing keeps the annotations true, not only the CI job that follows it."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_package_type_checks() -> None:
    result = subprocess.run([sys.executable, str(ROOT / ".ci" / "typecheck")],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1].startswith("Success: no issues found in "), result.stdout
