"""Check and compile policy text against the real session schema."""

from __future__ import annotations

from fumarole.policy_lang.checked import CheckedModule
from fumarole.policy_lang.driver import check_module as check
from fumarole.policy_lang.parser import parse
from fumarole.runtime.bundles.environment import load_environment
from fumarole.runtime.bundles.library import standard_library


def checked(source: str, file: str = "test.policy") -> CheckedModule:
    modules = standard_library().checked
    return check(load_environment(), parse(source, file), dict(modules))


def errors(source: str) -> list[tuple[str, int, int, str]]:
    """(code, line, col, message) of every error diagnostic."""
    return [(d.code, d.span.line, d.span.col, d.message) for d in checked(source).diagnostics if d.severity == "error"]


def warnings(source: str) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in checked(source).diagnostics if d.severity == "warning"]
