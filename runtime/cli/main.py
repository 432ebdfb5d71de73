"""The ``fumarole`` command.

Exit codes: 0 success; 1 the command ran and found failures (failing
scenarios); 2 the command could not run (bad input, bad policy, bad
configuration).  No command prints a Python traceback: every error is a
diagnostic naming the file and place (set FUMAROLE_DEBUG=1 to see internals).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Callable, Sequence

from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.cli.exit_codes import EXIT_ERROR, EXIT_FAILED, EXIT_OK
from fumarole.runtime.framework.namespace import PolicyRuntimeError


def _bundle_from_args(args: argparse.Namespace):
    from fumarole.runtime.bundles.bundle import (
        bundle_from_volcano_conf,
        default_bundle,
        load_bundle,
    )

    if args.bundle and args.config:
        raise FumaroleError([_arg_error("give either --bundle or --config, not both")])
    if args.bundle:
        return load_bundle(Path(args.bundle))
    if args.config:
        return bundle_from_volcano_conf(Path(args.config))
    return default_bundle()


def _arg_error(message: str):
    from fumarole.policy_lang.diagnostics import Diagnostic

    return Diagnostic("F002", message, "fumarole")


def cmd_run(args: argparse.Namespace) -> int:
    from fumarole.runtime.authoring.scenario import decisions_as_expect
    from fumarole.runtime.cli.output import render_table
    from fumarole.runtime.framework.session import Session
    from fumarole.runtime.ingest.kube import load_cluster, parse_time

    bundle = _bundle_from_args(args)
    path = Path(args.cluster)
    try:
        text = sys.stdin.read() if args.cluster == "-" else path.read_text()
    except OSError as exc:
        raise FumaroleError([_arg_error(f"cannot read {path}: {exc.strerror}")]) from None
    cluster = load_cluster(text, args.cluster)
    for warning in cluster.warnings:
        print(warning.headline(), file=sys.stderr)
    now = parse_time(args.now) if args.now else None
    session = Session(bundle, cluster, now=now)
    session.open()
    if session.problems:  # e.g. a queue hierarchy with a cycle: Volcano would stop scheduling it
        raise FumaroleError([p.diagnostic(args.cluster) for p in session.problems], {args.cluster: text})
    session.run_actions()
    decisions = session.close()
    if args.format == "json":
        print(json.dumps(decisions_as_expect(decisions), indent=2, sort_keys=True))
    else:
        print(render_table(session, decisions))
    return EXIT_OK


def cmd_test(args: argparse.Namespace) -> int:
    from fumarole.runtime.cli.test_command import (
        cmd_test as run_tests,  # coverage, explanations, json / junit output
    )

    return run_tests(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fumarole", description="Volcano scheduling sessions as policies.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="run one scheduling session on a cluster dump")
    run.add_argument("cluster", help="Kubernetes objects (YAML, multi-document or kind: List; '-' for stdin)")
    run.add_argument("--config", help="a volcano-scheduler.conf")
    run.add_argument("--bundle", help="a fumarole bundle folder")
    run.add_argument("--format", choices=("table", "json"), default="table")
    run.add_argument("--now", help="session clock (RFC 3339), for time-based policies")
    run.set_defaults(func=cmd_run)

    test = sub.add_parser("test", help="run scenario files and compare the decisions")
    test.add_argument("paths", nargs="+", help="scenario files or folders (searched recursively)")
    test.add_argument("-v", "--verbose", action="store_true",
                      help="also list passing cases (and, with --coverage, each branch not taken)")
    from fumarole.runtime.cli.authoring_commands import (
        add_test_arguments,  # --coverage, --threshold, --format
    )
    add_test_arguments(test)
    test.set_defaults(func=cmd_test)

    from fumarole.runtime.cli.serve_commands import (
        add_commands,  # bundle build|sign|verify|inspect, serve
    )
    add_commands(sub)
    from fumarole.runtime.cli.authoring_commands import register  # check, fmt, schema
    register(sub)
    return parser


def _guarded(func: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    try:
        return func(args)
    except FumaroleError as err:
        print(err.render(), file=sys.stderr)
        return EXIT_ERROR
    except PolicyRuntimeError as exc:
        where = f"{exc.file}:{exc.line}:{exc.col}: " if exc.file else ""
        print(f"{where}error[R001]: policy failed while running: {exc.message}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`fumarole run ... | head`): stop quietly, as Unix tools do.
        sys.stderr.close()
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - the promise is: never a traceback
        if os.environ.get("FUMAROLE_DEBUG"):
            traceback.print_exc()
        print(f"fumarole: internal error: {type(exc).__name__}: {exc} "
              "(please report it; FUMAROLE_DEBUG=1 shows details)", file=sys.stderr)
        return EXIT_ERROR


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return _guarded(args.func, args)


if __name__ == "__main__":
    sys.exit(main())
