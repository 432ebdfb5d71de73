"""The language core's diagnostics as data: each policy under tests/language/ states, in a comment
on a line, every diagnostic the checker must report there, and nothing else may be reported.

    let C = C + 1  # E134 @9: constant 'C' is used in its own value

pins the code, the line (the comment's), the column (after ``@``) and the message.  A new case is
a new line in one of those files.  Every code of the parser and the checker (P, E, W) has at
least one such line, except the few that no checked file reports (COVERED_ELSEWHERE).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fumarole.policy_lang.codes import CODES
from fumarole.runtime.bundles.library import check_sources, standard_library

CASES = sorted((Path(__file__).parent / "language").glob("*.policy"))
EXPECTED = re.compile(r"#\s*([A-Z]\d{3}) @(\d+): (.*)$")
# Codes of the language layers that `fumarole check` reports after checking, not the checker:
# pinned (code, file, line, column, message) in tests/test_check.py's TRIGGERS.
COVERED_ELSEWHERE = {"W210": "lint (policy_lang/lint.py) over a checked module",
                     "W230": "a node rule without a batch form, found when the module compiles"}


def expected_diagnostics(text: str) -> list[tuple[str, int, int, str]]:
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        match = EXPECTED.search(line)
        if match:
            found.append((match.group(1), number, int(match.group(2)), match.group(3).rstrip()))
    return found


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_the_file_reports_exactly_what_its_comments_state(path):
    text = path.read_text()
    expected = expected_diagnostics(text)
    assert expected, f"{path.name} states no diagnostic"
    result = check_sources([(path.name, text)], standard_library().checked)
    got = [(d.code, d.span.line, d.span.col, d.message) for d in result.diagnostics]
    assert sorted(got) == sorted(expected)


def test_every_parser_and_checker_code_has_a_case():
    stated = {code for path in CASES for code, *_ in expected_diagnostics(path.read_text())}
    language = {code for code in CODES if code[0] in "PEW"}
    assert language - stated - set(COVERED_ELSEWHERE) == set()
    assert stated & set(COVERED_ELSEWHERE) == set()  # then it is no longer covered elsewhere only
