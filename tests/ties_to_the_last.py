"""Run scenarios with ties among the best node scores going to the last node instead of the first.

Volcano's SelectBestNode picks at random among the nodes sharing the best score; fumarole takes
the first.  A conformance case whose outcome depends on that choice restates no behaviour Volcano
guarantees.  ``python -m tests.ties_to_the_last FOLDER...`` prints each case that fails with ties
broken the other way (reference engine) and exits non-zero if there is one.  It patches the
runtime's choice before any session is built, so it runs as a process of its own.
"""

from __future__ import annotations

import sys
from pathlib import Path

import fumarole.runtime.framework.scheduler_helper as scheduler_helper


def _last_best(session, scores: dict):
    """select_best with ties to the last node in order."""
    if session.observer is not None:
        session.observer.nodes_scored(scores)
    best, best_score = None, None
    for node, score in scores.items():
        if best_score is None or score >= best_score:
            best, best_score = node, score
    return best


def _sorted_ties_last(session, scores: dict) -> list:
    """sort_by_score with ties in reverse order."""
    if session.observer is not None:
        session.observer.nodes_scored(scores)
    return sorted(list(scores)[::-1], key=lambda node: -scores[node])


def main(folders: list[str]) -> int:
    scheduler_helper.select_best = _last_best
    scheduler_helper.sort_by_score = _sorted_ties_last
    from fumarole.runtime.authoring.scenario import run_file, scenario_files

    failed = [path for path in scenario_files([Path(f) for f in folders])
              if not run_file(path, engine="reference").passed]
    for path in failed:
        print(path)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
