"""Output formats for diagnostics and test results: text, JSON, SARIF, GitHub, JUnit.

Each format is a pure function from results to a string, so the commands stay
small and every format is tested by parsing what it returns.  SARIF is 2.1.0
(what GitHub code scanning and IDE SARIF viewers read); ``github`` is GitHub
Actions workflow commands, which annotate the pull request's lines; JUnit XML
is what CI dashboards aggregate.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence
from urllib.parse import quote

from fumarole.policy_lang.codes import title
from fumarole.policy_lang.diagnostics import Diagnostic, render_all
from fumarole.runtime.authoring.check import CheckReport


def tool_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fumarole")
    except PackageNotFoundError:
        return "0+source"


def failing(d: Diagnostic, fail_on: str) -> bool:
    """Does this diagnostic fail the run?  ``fail_on`` is the least severity that does."""
    return d.severity == "error" or (fail_on == "warning" and d.severity == "warning")


def summary(report: CheckReport) -> str:
    errors, warnings = report.count("error"), report.count("warning")
    files = len(report.files)
    return (f"checked {files} file{'s' * (files != 1)}: {errors} error{'s' * (errors != 1)}, "
            f"{warnings} warning{'s' * (warnings != 1)}")


# -- check results ------------------------------------------------------------------------

def check_text(report: CheckReport, fail_on: str) -> str:
    shown = render_all(report.diagnostics, report.sources, separator="\n\n")
    return "\n\n".join(([shown] if shown else []) + [summary(report)]) + "\n"


def check_document(report: CheckReport, fail_on: str) -> dict[str, Any]:
    """What ``check -o json`` and ``-o yaml`` print (version 1 of the report)."""
    return {
        "version": 1,
        "files": report.files,
        "summary": {"files": len(report.files), "errors": report.count("error"),
                    "warnings": report.count("warning"),
                    "failed": any(failing(d, fail_on) for d in report.diagnostics)},
        "diagnostics": [diagnostic_json(d) for d in report.diagnostics],
    }


def check_json(report: CheckReport, fail_on: str) -> str:
    return json.dumps(check_document(report, fail_on), indent=2) + "\n"


def check_yaml(report: CheckReport, fail_on: str) -> str:
    import yaml

    return yaml.safe_dump(check_document(report, fail_on), sort_keys=False, allow_unicode=True)


def diagnostic_json(d: Diagnostic) -> dict[str, Any]:
    """One diagnostic; the position fields are null for one about a whole file."""
    span = d.span if d.positioned else None
    return {"file": d.file, "line": span and span.line, "column": span and span.col,
            "end_line": span and span.end_line, "end_column": span and span.end_col,
            "severity": d.severity, "code": d.code, "title": title(d.code), "message": d.message, "hint": d.hint}


def _location(file: str) -> dict[str, str]:
    """A SARIF artifact location: relative to the source root when the path is relative."""
    path = Path(file)
    if path.is_absolute():
        return {"uri": path.as_uri()}
    return {"uri": quote(path.as_posix()), "uriBaseId": "%SRCROOT%"}


def check_sarif(report: CheckReport, fail_on: str) -> str:
    """SARIF 2.1.0: one run, one rule per code seen, one result per diagnostic."""
    codes = sorted({d.code for d in report.diagnostics})
    index = {code: i for i, code in enumerate(codes)}
    known_files = set(report.files) | set(report.sources)
    results = []
    for d in report.diagnostics:
        text = d.message + (f"\nhint: {d.hint}" if d.hint else "")
        result: dict[str, Any] = {"ruleId": d.code, "ruleIndex": index[d.code], "level": _sarif_level(d),
                                  "message": {"text": text}}
        if d.file in known_files:
            physical: dict[str, Any] = {"artifactLocation": _location(d.file)}
            if d.positioned:
                physical["region"] = _region(d)
            result["locations"] = [{"physicalLocation": physical}]
        results.append(result)
    rules = [{"id": code, "name": "".join(w.capitalize() for w in title(code).split()),
              "shortDescription": {"text": title(code)},
              "help": {"text": f"docs/diagnostics.md, section {code}"},
              "defaultConfiguration": {"level": "warning" if code.startswith("W") else "error"}}
             for code in codes]
    sarif = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "fumarole", "version": tool_version(), "rules": rules}},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri() + "/"}},
            "artifacts": [{"location": _location(f)} for f in report.files],
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
    return json.dumps(sarif, indent=2) + "\n"


def _region(d: Diagnostic) -> dict[str, int]:
    """SARIF regions are 1-based with an exclusive end column, as our spans are; never empty."""
    span = d.span
    end_col = span.end_col if span.end_line > span.line else max(span.end_col, span.col + 1)
    return {"startLine": span.line, "startColumn": span.col, "endLine": max(span.end_line, span.line),
            "endColumn": end_col}


def _sarif_level(d: Diagnostic) -> str:
    return {"error": "error", "warning": "warning"}.get(d.severity, "note")


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def check_github(report: CheckReport, fail_on: str) -> str:
    """GitHub Actions workflow commands: each diagnostic annotates its file and line on the pull request."""
    lines = []
    for d in report.diagnostics:
        command = "error" if d.severity == "error" else "warning" if d.severity == "warning" else "notice"
        props = [f"file={_escape_property(d.file)}"]
        if d.positioned:
            props += [f"line={d.span.line}", f"col={d.span.col}"]
            if d.span.end_line >= d.span.line:
                props += [f"endLine={d.span.end_line}", f"endColumn={d.span.end_col}"]
        props.append(f"title={_escape_property(f'{d.code} {title(d.code)}')}")
        message = d.message + (f"\nhint: {d.hint}" if d.hint else "")
        lines.append(f"::{command} {','.join(props)}::{_escape_data(message)}")
    lines.append(summary(report))
    return "\n".join(lines) + "\n"


def check_junit(report: CheckReport, fail_on: str) -> str:
    """One test case per file checked; its failing diagnostics are its failure, the others its output."""
    by_file: dict[str, list[Diagnostic]] = {f: [] for f in report.files}
    for d in report.diagnostics:
        by_file.setdefault(d.file, []).append(d)
    cases = []
    for file, diags in by_file.items():
        failures = [d for d in diags if failing(d, fail_on)]
        others = [d for d in diags if not failing(d, fail_on)]
        render = lambda ds: render_all(ds, report.sources)  # noqa: E731
        cases.append(_case("fumarole.check", file, file,
                           failure=(f"{len(failures)} problem(s): " + ", ".join(sorted({d.code for d in failures})),
                                    failures[0].code, render(failures)) if failures else None,
                           output=render(others)))
    return _junit("fumarole check", cases)


FORMATS: dict[str, Callable[[CheckReport, str], str]] = {
    "text": check_text, "json": check_json, "yaml": check_yaml, "sarif": check_sarif, "github": check_github, "junit": check_junit,
}


# -- JUnit -----------------------------------------------------------------------------------

def _case(classname: str, name: str, file: str, failure: tuple[str, str, str] | None = None,
          output: str = "", seconds: float = 0.0) -> ET.Element:
    case = ET.Element("testcase", classname=classname, name=name, file=file, time=f"{seconds:.3f}")
    if failure is not None:
        message, kind, text = failure
        node = ET.SubElement(case, "failure", message=message, type=kind)
        node.text = text
    if output:
        ET.SubElement(case, "system-out").text = output
    return case


def _junit(name: str, cases: Sequence[ET.Element]) -> str:
    failures = sum(1 for c in cases if c.find("failure") is not None)
    seconds = sum(float(c.get("time", "0")) for c in cases)
    suites = ET.Element("testsuites", name=name, tests=str(len(cases)), failures=str(failures), errors="0",
                        time=f"{seconds:.3f}")
    suite = ET.SubElement(suites, "testsuite", name=name, tests=str(len(cases)), failures=str(failures),
                          errors="0", skipped="0", time=f"{seconds:.3f}")
    suite.extend(cases)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def junit_cases(name: str, rows: Iterable[tuple[str, str, str | None, str, float]]) -> str:
    """JUnit XML for test results: (name, file, failure text or None, output, seconds) per case."""
    cases = [_case(name, case, file, (text.splitlines()[0], "failure", text) if text else None, output, seconds)
             for case, file, text, output, seconds in rows]
    return _junit(name, cases)
