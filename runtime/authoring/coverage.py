"""Rule coverage of policy files over a set of scenarios (``fumarole test --coverage``).

A *branch* is one outcome of one decision: a guard, an ``if``/``elif`` or
loop condition, a comprehension filter or a conditional expression is covered
when the scenarios made it both true and false; a ``victim`` rule is covered
when it fired.  Only policies some scenario's session used count: a plugin no
tier lists is not "uncovered", it is not there.  A file that ran but has no
decision (a rule that is one expression) is listed with no branches and
counts as covered: its rules ran.

The scope is the user's own files by default (``bundle``): a site's threshold
is about its policies, not about the standard library it builds on; ``all``
adds the standard library's files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fumarole.runtime.authoring.probes import Probes, Site
from fumarole.runtime.bundles.environment import STDLIB

SCOPES = ("bundle", "all")


@dataclass
class FileCoverage:
    file: str
    decisions: list[tuple[Site, int, int]] = field(default_factory=list)  # site, times false, times true

    @property
    def branches(self) -> int:
        return sum(site.outcomes for site, _, _ in self.decisions)

    @property
    def covered(self) -> int:
        return sum(_covered(site, false, true) for site, false, true in self.decisions)


def _covered(site: Site, false: int, true: int) -> int:
    return int(true > 0) if site.outcomes == 1 else int(true > 0) + int(false > 0)


def percent(covered: int, branches: int) -> float:
    return 100.0 * covered / branches if branches else 100.0


def in_standard_library(file: str) -> bool:
    try:
        return Path(file).resolve().is_relative_to(STDLIB.resolve())
    except (OSError, ValueError):
        return False


def measure(probes: Probes, scope: str = "all") -> list[FileCoverage]:
    """Coverage per policy file, in file order, over the sites of the policies that ran."""
    files: dict[str, FileCoverage] = {file: FileCoverage(file) for file in probes.used_files()}
    guarded = {(s.file, s.line) for s in probes.sites if s.kind == "guard"}
    for number in probes.used_sites():
        site = probes.sites[number]
        if site.kind == "victim" and (site.file, site.line) in guarded:
            continue  # `victim x when c` fires exactly when its guard is true: one decision, not two
        false, true = probes.counts[number]
        files.setdefault(site.file, FileCoverage(site.file)).decisions.append((site, false, true))
    for cov in files.values():
        cov.decisions.sort(key=lambda d: (d[0].line, d[0].col))
    return [files[f] for f in sorted(files) if scope == "all" or not in_standard_library(f)]


def totals(files: list[FileCoverage]) -> tuple[int, int]:
    return sum(f.covered for f in files), sum(f.branches for f in files)


def missing(site: Site, false: int, true: int) -> str | None:
    """What a decision never did, or None when it is covered."""
    if site.outcomes == 1:
        return None if true else "never fired"
    if true and false:
        return None
    if not true and not false:
        return "never reached"
    return "never true" if not true else "never false"


def coverage_text(files: list[FileCoverage], verbose: bool, scope: str = "all") -> str:
    width = max([len(f.file) for f in files] + [5])
    lines = ["coverage (branches taken: each condition true and false, each victim rule fired):"]
    if not files and scope == "bundle":
        lines.append("  no policy file of your own ran (--coverage-scope all includes the standard library)")
    for f in files:
        note = "  (no branches: its rules ran)" if not f.branches else ""
        lines.append(f"  {f.file:<{width}}  {f.covered:>4}/{f.branches:<4} {percent(f.covered, f.branches):6.1f}%{note}")
        if verbose:
            for site, false, true in f.decisions:
                gap = missing(site, false, true)
                if gap:
                    lines.append(f"    {site.line}:{site.col}: {gap}: {site.rule}")
    covered, branches = totals(files)
    lines.append(f"  {'total':<{width}}  {covered:>4}/{branches:<4} {percent(covered, branches):6.1f}%")
    return "\n".join(lines)


def coverage_json(files: list[FileCoverage]) -> dict[str, Any]:
    covered, branches = totals(files)
    return {
        "files": [{
            "file": f.file, "branches": f.branches, "covered": f.covered,
            "percent": round(percent(f.covered, f.branches), 2),
            "decisions": [{"line": s.line, "column": s.col, "kind": s.kind, "rule": s.rule,
                           "true": true, "false": false, "missing": missing(s, false, true)}
                          for s, false, true in f.decisions],
        } for f in files],
        "total": {"branches": branches, "covered": covered, "percent": round(percent(covered, branches), 2)},
    }
