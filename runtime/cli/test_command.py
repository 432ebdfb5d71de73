"""``fumarole test``: scenario files as policy unit tests, with rule coverage and explanations.

Cases run exactly as :func:`fumarole.runtime.authoring.scenario.run_file` runs them.  With
``--coverage`` they run on instrumented copies of their policies
(:mod:`fumarole.runtime.authoring.probes`; an instrumented library is built once per distinct
set of sources) and the branch coverage of every policy file used is
reported, ``--threshold P`` failing the run below P percent.  A failing case
whose evictions differ from its expectation is run once more, traced, to name
the rule of each plugin that selected or excluded each pod in question
(:mod:`fumarole.runtime.authoring.explain`).  The text output's last line stays
``N passed, M failed``.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from fumarole.policy_lang import file_errors
from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.authoring.coverage import (
    coverage_json,
    coverage_text,
    measure,
    percent,
    totals,
)
from fumarole.runtime.authoring.explain import explain
from fumarole.runtime.authoring.probes import Probes
from fumarole.runtime.authoring.reporting import junit_cases
from fumarole.runtime.authoring.scenario import (
    Outcome,
    Scenario,
    run_file,
    scenario_files,
)
from fumarole.runtime.bundles.library import Library
from fumarole.runtime.cli.exit_codes import EXIT_ERROR, EXIT_FAILED, EXIT_OK
from fumarole.runtime.ingest.source import read_text
from fumarole.runtime.ingest.yamlpos import YamlError, load


@dataclass
class CaseResult:
    outcome: Outcome
    explanation: list[str]
    seconds: float


def cmd_test(args: argparse.Namespace) -> int:
    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        raise FumaroleError([file_errors.no_such_path(p) for p in missing])
    covering = args.coverage or args.threshold is not None
    probes = Probes() if covering else None
    prepare = _instrumenting(probes) if probes else None
    results = []
    for path in scenario_files([Path(p) for p in args.paths]):
        start = time.perf_counter()
        outcome = run_file(path, prepare, timeout=args.session_timeout)
        why = [] if outcome.passed else explain(path, outcome, _document(path))
        results.append(CaseResult(outcome, why, time.perf_counter() - start))
    files = measure(probes, args.coverage_scope) if probes else []
    covered, branches = totals(files)
    below = args.threshold is not None and percent(covered, branches) < args.threshold
    failed = sum(1 for r in results if not r.outcome.passed)
    if args.format == "json":
        print(json.dumps(_as_json(results, files if covering else None, args.threshold), indent=2))
    elif args.format == "yaml":
        import yaml

        print(yaml.safe_dump(_as_json(results, files if covering else None, args.threshold), sort_keys=False,
                             allow_unicode=True), end="")
    elif args.format == "junit":
        print(junit_cases("fumarole test", [
            (r.outcome.name, r.outcome.file, None if r.outcome.passed else _failure_text(r), "", r.seconds)
            for r in results]), end="")
    else:
        for r in results:
            if not r.outcome.passed:
                print(_failure_text(r))
            elif args.verbose:
                print(f"PASS {r.outcome.name}")
        if covering:
            print(coverage_text(files, args.verbose, args.coverage_scope))
        if below:
            print(f"coverage {percent(covered, branches):.1f}% is below the threshold {args.threshold:g}%")
        print(f"{len(results) - failed} passed, {failed} failed")
    if any(r.outcome.bad_input for r in results):
        return EXIT_ERROR
    return EXIT_FAILED if failed or below else EXIT_OK


def _instrumenting(probes: Probes) -> Callable[[Scenario], Scenario]:
    """Swap each scenario's policies for instrumented ones (built once per distinct set of sources)."""
    cache: dict[frozenset, Library] = {}

    def prepare(scenario: Scenario) -> Scenario:
        library = scenario.bundle.library
        key = frozenset(library.sources.items())
        if key not in cache:
            cache[key] = probes.instrument(library)
        return replace(scenario, bundle=replace(scenario.bundle, library=cache[key]))
    return prepare


def _document(path: Path) -> dict:
    try:
        doc = load(read_text(path))
    except (FumaroleError, YamlError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _failure_text(r: CaseResult) -> str:
    o = r.outcome
    return "\n".join([f"FAIL {o.name} ({o.file}:{o.line}): {o.difference}"] + [f"    {line}" for line in r.explanation])


def _as_json(results: list[CaseResult], files: list | None, threshold: float | None) -> dict:
    failed = sum(1 for r in results if not r.outcome.passed)
    out: dict[str, Any] = {
        "cases": [{"name": r.outcome.name, "file": r.outcome.file, "line": r.outcome.line,
                   "passed": r.outcome.passed, "difference": r.outcome.difference or None,
                   "explanation": r.explanation, "seconds": round(r.seconds, 4)} for r in results],
        "summary": {"passed": len(results) - failed, "failed": failed},
    }
    if files is not None:
        out["coverage"] = {**coverage_json(files), "threshold": threshold}
    return out
