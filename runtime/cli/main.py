"""The ``fumarole`` command.

Exit codes: 0 success; 1 the command ran and found failures (failing
scenarios); 2 the command could not run (bad input, bad policy, bad
configuration).  No command prints a Python traceback: every error is a
diagnostic naming the file and place (set FUMAROLE_DEBUG=1 to see internals).
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
from pathlib import Path
from typing import Any, Callable, NoReturn, Sequence

from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.cli.exit_codes import EXIT_ERROR, EXIT_OK
from fumarole.runtime.cli.grammar import CommandLineError, FumaroleParser, parse_error, unknown_arguments_error
from fumarole.runtime.cli.options import add_output_option, session_time, session_timeout, usage_error
from fumarole.runtime.cli.snapshot_command import add_command as add_snapshot_command
from fumarole.runtime.cli.snapshot_command import add_live_cluster_options
from fumarole.runtime.framework.policy_error import PolicyRuntimeError

# numpy's OpenBLAS starts a pool of threads as it is imported (later, by the commands that need it),
# and they spin a while: CPU a short run notices (benchmarks/README.md, "Startup", has the figure).
# fumarole never calls BLAS (node columns use element-wise operations), so one thread is all it
# needs; a user's own setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _bundle_from_args(args: argparse.Namespace, live_conf: str | None = None) -> tuple[Any, Callable[[str], str]]:
    """The bundle ``--bundle`` or ``--config`` names (else a live cluster's own configuration, else
    Volcano's default), and how to show its policy files' names in errors (an archive's files as
    ``ARCHIVE!/path``)."""
    from fumarole.runtime.bundles.bundle import bundle_from_conf_text, bundle_from_volcano_conf, default_bundle

    if args.bundle and args.config:
        raise usage_error("give either --bundle or --config, not both")
    if args.config:
        return bundle_from_volcano_conf(Path(args.config)), str
    if not args.bundle and live_conf is not None:
        return bundle_from_conf_text(live_conf, f"{args.scheduler_configmap} ({args.kubeconfig})"), str
    if not args.bundle:
        return default_bundle(), str
    from fumarole.runtime.whatif.inputs import bundle_at

    return bundle_at(Path(args.bundle), args.trusted_key or [])


def cmd_run(args: argparse.Namespace) -> int:
    from fumarole.runtime.cli.output import render_document, render_explanations, render_table
    from fumarole.runtime.cli.progress import Progress
    from fumarole.runtime.cli.scheduler_flags import options_from_args
    from fumarole.runtime.cli.sessions import read_cluster, show_warnings
    from fumarole.runtime.framework.budget import StepBudget
    from fumarole.runtime.framework.lifecycle import new_session, run_session
    from fumarole.runtime.ingest.scheduler_options import with_overrides

    progress = Progress()
    progress("loading")
    wants_live = bool(args.kubeconfig or args.context)
    if (args.cluster is None) != wants_live:
        raise usage_error("give a cluster file, or --kubeconfig / --context for the live cluster (one of them)")
    if wants_live:  # the live cluster, as the dump `fumarole snapshot` would write
        from fumarole.runtime.cli.snapshot_command import dumped, live_snapshot
        from fumarole.runtime.ingest.kube import load_cluster

        live = live_snapshot(args)
        args.cluster, text = f"{args.kubeconfig}:{args.context or 'current-context'}", dumped(live)
        cluster = load_cluster(text, args.cluster)
        bundle, label = _bundle_from_args(args, live.scheduler_conf)
    else:
        bundle, label = _bundle_from_args(args)
        cluster, text = read_cluster(args.cluster)
    progress.done()
    options = with_overrides(bundle.scheduler_options, options_from_args(args, args.argv))
    show_warnings((*bundle.warnings, *cluster.warnings_for(options)))
    progress("open")
    explainer = None
    if args.explain:
        from fumarole.runtime.authoring.explanations import Explainer, relabel

        explainer = Explainer(bundle)
    budget = StepBudget(timeout=args.session_timeout)
    session = explainer.session(cluster, args.now, options=options, engine=args.engine, budget=budget) \
        if explainer else new_session(bundle, cluster, now=args.now, options=options, engine=args.engine,
                                      budget=budget)  # a freshly started process
    session.progress = progress
    try:
        # The one-shot process's only job: what loading and opening built lives until exit, and
        # what the session makes is freed by reference counting (its policies make a few hundred
        # objects in cycles on L), so the cycle collector is not needed again once the session is
        # open.  Left on, it would first traverse everything the actions made, to free nothing.
        decisions = run_session(session, args.cluster, {args.cluster: text}, label,
                                opened=gc.disable if args.one_shot else None)
    finally:
        progress.done()
    show_warnings(session.warnings)
    explanations = relabel(explainer.explain(session, decisions), label) if explainer else None
    if args.format == "table":
        print(render_table(session, decisions))
        if explanations is not None:
            print()
            print(render_explanations(explanations, [job.uid for job in session.job_list]))
    else:
        from fumarole.runtime.authoring.scenario import decisions_as_expect

        document = decisions_as_expect(decisions)
        if explanations is not None:
            document["explanations"] = [e.as_json() for e in explanations]
        print(render_document(document, args.format))
    return EXIT_OK


def cmd_lsp(args: argparse.Namespace) -> int:
    from fumarole.runtime.api.extras import require_extra

    require_extra("lsp", "the language server")
    from fumarole.runtime.lsp.server import main as serve_lsp

    serve_lsp()
    return EXIT_OK


def cmd_completion(args: argparse.Namespace) -> int:
    from fumarole.runtime.cli.completion import SHELLS

    print(SHELLS[args.shell](build_parser()), end="")
    return EXIT_OK


def cmd_version(args: argparse.Namespace) -> int:
    from fumarole.runtime.authoring.reporting import tool_version
    from fumarole.runtime.cli.output import render_document

    info = {"fumarole": tool_version(), "python": platform.python_version()}
    if args.format == "text":
        print(f"fumarole {info['fumarole']} (Python {info['python']})")
    else:
        print(render_document(info, args.format))
    return EXIT_OK


def cmd_test(args: argparse.Namespace) -> int:
    from fumarole.runtime.cli.test_command import (
        cmd_test as run_tests,  # coverage, explanations, json / junit output
    )

    return run_tests(args)


def build_parser() -> argparse.ArgumentParser:
    from fumarole.runtime.cli.scheduler_flags import add_scheduler_option_flags, long_flags

    parser = FumaroleParser(prog="fumarole", description="Volcano scheduling sessions as policies.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", help="what to do")

    parser.add_argument("--version", action=_VersionAction)

    run = sub.add_parser("run", help="run one scheduling session on a cluster dump")
    run.add_argument("cluster", nargs="?",
                     help="Kubernetes objects (YAML, multi-document or kind: List; '-' for stdin)")
    add_live_cluster_options(run)
    run.add_argument("--config", help="a volcano-scheduler.conf")
    run.add_argument("--bundle", help="a fumarole bundle folder or archive (.tar.gz)")
    run.add_argument("--trusted-key", action="append",
                     help="with an archive: accept it only if signed by this ed25519 public key; repeatable")
    add_output_option(run, ("table", "json", "yaml"))
    run.add_argument("--engine", choices=("fast", "reference"), default="fast",
                     help="fast: node rules over node columns (default); reference: node by node")
    run.add_argument("--now", type=session_time, help="session clock (RFC 3339, e.g. 2026-11-23T18:00:00Z)")
    run.add_argument("--explain", action="store_true",
                     help="say why each bind, pipeline and eviction was made and why jobs stay pending, "
                          "naming policy rules by file:line")
    run.add_argument("--session-timeout", type=session_timeout, metavar="SECONDS",
                     help="stop the session with R001 when its policies run longer than this")
    add_scheduler_option_flags(run)
    run.set_defaults(func=cmd_run, known_flags=long_flags(run))

    add_snapshot_command(sub)

    lsp = sub.add_parser("lsp", help="run the language server (LSP over stdio) for editors")
    lsp.add_argument("--stdio", action="store_true",
                     help="speak LSP over standard input and output (the only transport, so the default; "
                          "editor clients such as vscode-languageclient pass it)")
    lsp.set_defaults(func=cmd_lsp)

    completion = sub.add_parser("completion", help="print a shell completion script (bash, zsh or fish)")
    completion.add_argument("shell", choices=("bash", "zsh", "fish"), help="the shell to complete for")
    completion.set_defaults(func=cmd_completion)

    version = sub.add_parser("version", help="print fumarole's version")
    add_output_option(version, ("text", "json", "yaml"))
    version.set_defaults(func=cmd_version)

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
    from fumarole.runtime.cli import whatif_commands  # replay, sweep, trace
    whatif_commands.register(sub)
    from fumarole.runtime.cli import diff_command
    diff_command.add_commands(sub)
    from fumarole.runtime.cli.help_examples import finish
    return finish(parser)


class _VersionAction(argparse.Action):
    """``--version``: looks the version up only when asked (every other command starts without it)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="show program's version number and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        from fumarole.runtime.authoring.reporting import tool_version

        sys.stdout.write(f"{parser.prog} {tool_version()}\n")
        parser.exit()


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
            import traceback

            traceback.print_exc()
        print(f"fumarole: internal error: {type(exc).__name__}: {exc} "
              "(please report it; FUMAROLE_DEBUG=1 shows details)", file=sys.stderr)
        return EXIT_ERROR


def main(argv: Sequence[str] | None = None, one_shot: bool = False) -> int:
    """Run one command; ``one_shot``: the command is all the process will do (:func:`entry`)."""
    from fumarole.runtime.cli.scheduler_flags import unknown_flags_error

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args, extras = parser.parse_known_args(argv)
    except CommandLineError as error:
        print(parse_error(error, argv).render(), file=sys.stderr)
        return EXIT_ERROR
    if extras:
        # run and serve take Volcano's flags (O001 / O003 among them); every other command its own.
        unknown = unknown_flags_error(extras, argv, args.known_flags) if hasattr(args, "known_flags") else None
        print((unknown or unknown_arguments_error(extras, argv, args.command_parser)).render(), file=sys.stderr)
        return EXIT_ERROR
    args.argv, args.one_shot = argv, one_shot
    return _guarded(args.func, args)


def entry() -> NoReturn:
    """The ``fumarole`` command: :func:`main`, its output flushed, then the process ends without
    tearing down its heap.  After a session on a large cluster that is millions of objects (most
    of a second on L, freed one by one to no one's benefit); fumarole registers nothing to run
    at exit and removes its temporary folders itself."""
    code = main(one_shot=True)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # the reader went away, or the stream was closed (| head)
            pass
    os._exit(code)


if __name__ == "__main__":
    entry()
