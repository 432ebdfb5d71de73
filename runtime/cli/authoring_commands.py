"""The policy-author commands: ``check``, ``fmt`` and ``schema`` (argument parsing and exit codes).

The work is elsewhere -- :mod:`fumarole.runtime.authoring.check` finds the problems,
:mod:`fumarole.runtime.authoring.reporting` writes them, :mod:`fumarole.policy_lang.fmt` formats -- so each
command here is only its options, its output and its exit code: 0 clean,
1 problems found (or files that would be reformatted), 2 the command could
not do its job (bad arguments, unreadable or unparsable input).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fumarole.policy_lang import file_errors
from fumarole.policy_lang.diagnostics import Diagnostic, FumaroleError
from fumarole.runtime.cli.exit_codes import EXIT_ERROR, EXIT_FAILED, EXIT_OK
from fumarole.runtime.cli.options import add_output_option, session_timeout

SCENARIO_TIMEOUT = 60.0  # seconds one scenario's policies may run under `fumarole test` (--session-timeout)

CHECK_FORMATS = ("text", "json", "yaml", "sarif", "github", "junit")
SCHEMAS = ("bundle", "hooks")


def register(sub: argparse._SubParsersAction) -> None:
    check = sub.add_parser("check", help="report every problem in policies, bundles and configurations",
                           description="Check policy files, bundle folders and manifests, volcano-scheduler.conf "
                                       "files, scenarios and cluster dumps (folders recursively), reporting "
                                       "every problem of every file in one run.")
    check.add_argument("paths", nargs="+", metavar="PATH",
                       help="policy files, bundle folders, volcano-scheduler.conf files, scenarios, cluster dumps")
    check.add_argument("--strict", action="store_true",
                       help="also warn about unused arguments and definitions, shadowed names, rules that can "
                            "never match and plugins listed twice")
    add_output_option(check, CHECK_FORMATS)
    check.add_argument("--fail-on", choices=("error", "warning"), default="error",
                       help="the least severity that makes the exit code 1 (default: error)")
    check.set_defaults(func=cmd_check)

    fmt = sub.add_parser("fmt", help="format policy files canonically",
                         description="Rewrite policy files in the canonical layout (folders recursively; "
                                     "'-' formats standard input to standard output).")
    fmt.add_argument("paths", nargs="+", metavar="PATH", help="policy files or folders; '-' for standard input")
    mode = fmt.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="change nothing; exit 1 naming the files that would change")
    mode.add_argument("--diff", action="store_true", help="change nothing; print what would change as a diff")
    add_output_option(fmt, ("text", "json", "yaml"))
    fmt.set_defaults(func=cmd_fmt)

    schema = sub.add_parser("schema", help="print a JSON Schema (for editors: yaml-language-server, IDEs)")
    schema.add_argument("name", nargs="?", choices=SCHEMAS, default="bundle",
                        help="bundle (bundle.yaml, the default) or hooks (the hook catalogue)")
    schema.set_defaults(func=cmd_schema)


def add_test_arguments(test: argparse.ArgumentParser) -> None:
    """The options ``fumarole test`` gains here (its runner is fumarole.runtime.cli.test_command)."""
    test.add_argument("--coverage", action="store_true",
                      help="report which policy rules the scenarios exercised (branch coverage per file)")
    test.add_argument("--coverage-scope", choices=("bundle", "all"), default="bundle",
                      help="whose policy files coverage counts: the bundle's own (default) or also the "
                           "standard library's")
    test.add_argument("--threshold", type=float, metavar="P",
                      help="fail when the total coverage is below P percent (implies --coverage)")
    test.add_argument("--session-timeout", type=session_timeout, default=SCENARIO_TIMEOUT, metavar="SECONDS",
                      help="fail a scenario whose policies run longer than this, naming the policy line they "
                           f"had reached, and go on with the next (default {SCENARIO_TIMEOUT:g})")
    add_output_option(test, ("text", "json", "yaml", "junit"))


def cmd_check(args: argparse.Namespace) -> int:
    from fumarole.runtime.authoring.check import check_paths
    from fumarole.runtime.authoring.reporting import FORMATS, failing

    report = check_paths(args.paths, strict=args.strict)
    sys.stdout.write(FORMATS[args.format](report, args.fail_on))
    if report.unable_to_run:
        return EXIT_ERROR
    return EXIT_FAILED if any(failing(d, args.fail_on) for d in report.diagnostics) else EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    from fumarole.runtime.authoring.schema_export import published_schema

    print(json.dumps(published_schema(args.name), indent=2))
    return EXIT_OK


def _policy_paths(paths: list[str]) -> tuple[list[Path], list[Diagnostic]]:
    files: list[Path] = []
    problems: list[Diagnostic] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            files += sorted(p for p in path.rglob("*.policy") if p.is_file())
        elif path.suffix == ".policy" and path.is_file():
            files.append(path)
        elif not path.exists():
            problems.append(file_errors.no_such_path(path))
        else:
            problems.append(file_errors.not_a_policy_file(str(path)))
    return files, problems


def cmd_fmt(args: argparse.Namespace) -> int:
    """Format, check or diff; ``-o json|yaml`` prints one document (each file's outcome, any diff, the
    diagnostics) instead of the lines for people."""
    from fumarole.policy_lang.fmt import format_source
    from fumarole.runtime.authoring.reporting import diagnostic_json
    from fumarole.runtime.cli.output import render_document
    from fumarole.runtime.ingest.source import display_path, read_text

    if args.paths == ["-"]:
        sys.stdout.write(format_source(sys.stdin.read(), "<stdin>"))
        return EXIT_OK
    people = args.format == "text"
    files, problems = _policy_paths(args.paths)
    for d in problems if people else ():
        print(d.headline(), file=sys.stderr)
    outcomes: list[dict] = []
    changed = 0
    for path in files:
        file = display_path(path)
        try:
            source = read_text(path, file)  # F001 for a file that cannot be read or is not UTF-8
            formatted = format_source(source, file)
        except FumaroleError as err:  # unreadable, or a syntax error: nothing to format
            problems += err.diagnostics
            if people:
                print(err.render(), file=sys.stderr)
            continue
        if formatted == source:
            outcomes.append({"file": file, "outcome": "unchanged"})
            continue
        changed += 1
        if args.check:
            outcomes.append({"file": file, "outcome": "would reformat"})
            if people:
                print(f"would reformat {file}")
        elif args.diff:
            import difflib

            diff = "".join(difflib.unified_diff(source.splitlines(True), formatted.splitlines(True),
                                                f"{file} (original)", f"{file} (formatted)"))
            outcomes.append({"file": file, "outcome": "would reformat", "diff": diff})
            if people:
                sys.stdout.write(diff)
        else:
            path.write_text(formatted)
            outcomes.append({"file": file, "outcome": "reformatted"})
            if people:
                print(f"reformatted {file}")
    if not people:
        print(render_document({"files": outcomes, "diagnostics": [diagnostic_json(d) for d in problems]},
                              args.format))
    if problems:
        return EXIT_ERROR
    return EXIT_FAILED if args.check and changed else EXIT_OK
