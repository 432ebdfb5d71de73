"""Shared fixtures: the repository root and a runner for the `fumarole` command in-process."""

from __future__ import annotations

import atexit
import io
import os
import shutil
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent

# The compiled-library cache (runtime/bundles/compile_cache.py) of a test run is a fresh folder,
# inherited by the `fumarole` processes tests start: the suite starts cold as CI does and never
# writes into the user's own cache.
_CACHE = tempfile.mkdtemp(prefix="fumarole-test-cache-")
os.environ["FUMAROLE_CACHE_DIR"] = _CACHE
os.environ.pop("FUMAROLE_NO_CACHE", None)
atexit.register(shutil.rmtree, _CACHE, True)

# Every session of the suite, and of the `fumarole` processes it starts, checks the fast engine's
# batch answers against the per-node ones: a disagreement fails the test (docs/language.md,
# "Checking the engines against each other").
os.environ["FUMAROLE_CHECK_ENGINES"] = "1"

# The suite's hypothesis tests draw the same examples on every run, so a failure seen once (in CI,
# say) is seen again on any machine.  FUMAROLE_FUZZ=explore draws new examples each run and keeps
# failures in .hypothesis/ for the hunt (README, "Two commands").
settings.register_profile("suite", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile("explore" if os.environ.get("FUMAROLE_FUZZ") == "explore" else "suite")


@dataclass
class Result:
    code: int
    out: str
    err: str


def run_cli(*args: str) -> Result:
    from fumarole.runtime.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
    return Result(code, out.getvalue(), err.getvalue())


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def root() -> Path:
    return ROOT
