"""The what-if commands: ``replay`` (and the inputs they share: bundles, durations).

The work is in :mod:`fumarole.runtime.whatif`; each command here is its
options, its output and its exit code (0 done, 2 bad input).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fumarole.policy_lang.diagnostics import Diagnostic, FumaroleError
from fumarole.runtime.cli.exit_codes import EXIT_OK

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz")


def load_any_bundle(text: str):
    """A bundle folder, bundle.yaml, archive (.tar.gz) or volcano-scheduler.conf; Volcano's default for None."""
    from fumarole.runtime.bundles.bundle import default_bundle, load_bundle

    if text is None:
        return default_bundle()
    path = Path(text)
    if not path.exists():
        raise FumaroleError([Diagnostic("F001", f"no such bundle or configuration: {path}", str(path))])
    if path.is_file() and path.name.endswith(ARCHIVE_SUFFIXES):
        from fumarole.runtime.bundles.loader import load_artifact

        return load_artifact(path.read_bytes(), str(path)).bundle
    return load_bundle(path)


def duration_arg(text: str) -> float:
    """An argparse type: "90s", "1h30m" or a number of seconds."""
    from fumarole.runtime.whatif.trace import seconds

    value = seconds(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"expected a duration such as 90s or 1h30m, not {text!r}")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    replay = sub.add_parser("replay", help="replay a workload trace on a virtual clock; metrics and an HTML report",
                            description="Play a trace (docs/traces.md) with a bundle: a session every --period of "
                                        "virtual time; writes metrics.json, queues.csv, nodes.csv, jobs.csv and "
                                        "report.html to --out.")
    replay.add_argument("trace", help="a trace file (fumarole trace synth writes them)")
    replay.add_argument("--bundle", help="a bundle folder or archive, or a volcano-scheduler.conf "
                                         "(default: Volcano's default configuration)")
    replay.add_argument("--compare", metavar="B2", help="a second bundle or configuration, replayed on the same "
                                                        "trace and shown beside the first everywhere")
    replay.add_argument("--out", required=True, metavar="DIR", help="the output folder (created)")
    add_replay_options(replay)
    replay.set_defaults(func=cmd_replay)


def add_replay_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--period", type=duration_arg, default=1.0, help="virtual time between sessions (default 1s)")
    parser.add_argument("--until", type=duration_arg, help="stop after this much virtual time "
                                                           "(default: when the trace is played out)")
    parser.add_argument("--on-evict", choices=("restart", "resume"), default="restart",
                        help="an evicted task starts again from zero (default) or keeps the work it did")
    parser.add_argument("--grace", type=duration_arg, default=0.0,
                        help="how long an evicted pod takes to terminate (default 0s: gone by the next session)")
    parser.add_argument("--pingpong-window", type=duration_arg, default=600.0,
                        help="evictions back and forth within this window count as ping-pong (default 10m)")


def replay_options(args: argparse.Namespace):
    from fumarole.runtime.whatif.clock import ReplayOptions

    if args.period <= 0:
        raise FumaroleError([Diagnostic("F002", "--period must be more than zero", "fumarole")])
    return ReplayOptions(args.period, args.until, args.on_evict, args.grace, args.pingpong_window)


def cmd_replay(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from fumarole.runtime.cli.progress import ProgressBar
    from fumarole.runtime.whatif.clock import replay
    from fumarole.runtime.whatif.outputs import write_outputs
    from fumarole.runtime.whatif.trace import load_trace

    trace = load_trace(Path(args.trace))
    options = replay_options(args)
    labels = [args.bundle or "volcano-default"] + ([args.compare] if args.compare else [])
    bundles = [load_any_bundle(args.bundle)] + ([load_any_bundle(args.compare)] if args.compare else [])
    runs = []
    for label, bundle in zip(labels, bundles):
        bar = ProgressBar(options.until or trace.duration, f"replay {label}", "s")
        runs.append(replace(replay(trace, bundle, options, bar.update), bundle=label))
        bar.close()
    metrics = write_outputs(Path(args.out), runs)
    for run, summary in zip(runs, [metrics, metrics.get("compare")]):
        overall = summary["overall"]
        wait = overall["waitSeconds"]["p95"]
        print(f"{run.bundle}: {overall['jobsCompleted']}/{overall['jobsSubmitted']} jobs completed, "
              f"wait p95 {'-' if wait is None else f'{wait:g}s'}, {overall['evictions']} evictions, "
              f"{len(summary['pingPong']['queues'])} ping-pong queue pairs, "
              f"{summary['virtualSeconds']:g} virtual s in {summary['wallSeconds']:.2f} s")
    print(f"wrote {args.out}/report.html, metrics.json, queues.csv, nodes.csv, jobs.csv", file=sys.stderr)
    return EXIT_OK
