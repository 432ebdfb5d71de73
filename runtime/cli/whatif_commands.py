"""The what-if commands: ``replay``, ``sweep`` and ``trace synth|cut``.

The work is in :mod:`fumarole.runtime.whatif`; each command here is its
options, its output and its exit code (0 done, 2 bad input).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fumarole.policy_lang import file_errors
from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.api.extras import require_extra
from fumarole.runtime.cli.exit_codes import EXIT_OK
from fumarole.runtime.cli.options import add_output_option, session_timeout

SHAPES = ("steady", "burst", "two-queues", "best-effort")  # runtime/whatif/synth.py, named here to keep imports lazy


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
    add_output_option(replay, ("text", "json", "yaml"))
    replay.set_defaults(func=cmd_replay)

    sweep = sub.add_parser("sweep", help="replay every combination of traces, bundles and plugin arguments",
                           description="Run the replays a sweep file names (docs/traces.md) on a local process "
                                       "pool or a Dask cluster; writes results.csv and summary.html to --out.")
    sweep.add_argument("spec", help="a sweep file (kind: Sweep)")
    sweep.add_argument("--out", required=True, metavar="DIR", help="the output folder (created): results.csv, summary.html")
    sweep.add_argument("--dask", metavar="ADDRESS", help="a Dask scheduler address, or 'local' for a LocalCluster")
    sweep.add_argument("--workers", type=int, help="processes (local pool or LocalCluster); default: one per CPU")
    sweep.add_argument("--session-timeout", type=session_timeout, metavar="SECONDS",
                       help="end with an error any session of any replay whose policies run longer than this "
                            "(as replay's)")
    add_output_option(sweep, ("text", "json", "yaml"))
    sweep.set_defaults(func=cmd_sweep)

    trace = sub.add_parser("trace", help="make traces for replay: synth (named shapes), cut (from a cluster dump)")
    actions = trace.add_subparsers(dest="trace_command", required=True, metavar="ACTION",
                                  help="how to make the trace")
    synth = actions.add_parser("synth", help="a trace of a named shape, deterministic for a seed")
    synth.add_argument("shape", choices=SHAPES, help="the shape of the workload")
    synth.add_argument("--seed", type=int, default=1, help="the random seed (default 1): the same seed, the same trace")
    synth.add_argument("--nodes", type=int, default=10, help="8-CPU, 32 GiB nodes (default 10)")
    synth.add_argument("--duration", type=duration_arg, default=4 * 3600.0, help="submissions span (default 4h)")
    synth.add_argument("--out", required=True, metavar="FILE", help="the trace file to write")
    synth.set_defaults(func=cmd_trace_synth)
    cut = actions.add_parser("cut", help="a trace starting from a cluster dump, its pods given run times")
    cut.add_argument("cluster", help="a cluster dump (fumarole snapshot or kubectl get ... -o yaml)")
    cut.add_argument("--run-time", required=True, metavar="DIST",
                     help="run-time distribution: fixed:1h, uniform:10m,2h or exp:30m")
    cut.add_argument("--seed", type=int, default=1, help="the random seed of the run times (default 1)")
    cut.add_argument("--out", required=True, metavar="FILE", help="the trace file to write")
    cut.set_defaults(func=cmd_trace_cut)


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
    parser.add_argument("--session-timeout", type=session_timeout, metavar="SECONDS",
                        help="end with an error any session whose policies run longer than this")
    parser.add_argument("--settle", type=duration_arg, default=6 * 3600.0,
                        help="with no event or task end ahead, stop once the sessions have changed nothing for "
                             "this long (default 6h; it ends a bundle that reads the clock, docs/traces.md)")
    parser.add_argument("--max-wall", type=duration_arg, default=3600.0,
                        help="stop after this much wall-clock time (default 1h)")


def replay_options(args: argparse.Namespace):
    from fumarole.runtime.whatif.clock import ReplayOptions

    if args.period <= 0:
        raise FumaroleError([file_errors.not_positive("--period")])
    if args.max_wall <= 0:
        raise FumaroleError([file_errors.not_positive("--max-wall")])
    return ReplayOptions(args.period, args.until, args.on_evict, args.grace, args.pingpong_window,
                         args.session_timeout, args.settle, args.max_wall)


def cmd_replay(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from fumarole.runtime.cli.output import render_document

    from fumarole.runtime.whatif import inputs
    from fumarole.runtime.cli.progress import ProgressBar
    from fumarole.runtime.whatif.clock import replay
    from fumarole.runtime.whatif.outputs import write_outputs
    from fumarole.runtime.whatif.trace import load_trace

    require_extra("report", "replay's HTML report")
    trace = load_trace(Path(args.trace))
    options = replay_options(args)
    labels = [args.bundle or "volcano-default"] + ([args.compare] if args.compare else [])
    bundles = [inputs.load_any_bundle(args.bundle)] + ([inputs.load_any_bundle(args.compare)] if args.compare else [])
    runs = []
    for label, bundle in zip(labels, bundles):
        bar = ProgressBar(options.until, f"replay {label}", " virtual s")  # its end is known only with --until
        runs.append(replace(replay(trace, bundle, options, bar.update), bundle=label))
        bar.close()
    metrics = write_outputs(Path(args.out), runs)
    # each run's summary: the first's is metrics.json itself, a compared run's its "compare"
    summaries = list(zip(runs, [metrics] + ([metrics["compare"]] if len(runs) > 1 else [])))
    if args.format != "text":  # each replay's summary as metrics.json holds it, one document
        print(render_document({"replays": [{"bundle": run.bundle, "stopped": run.stopped,
                                            **{k: v for k, v in summary.items() if k != "compare"}}
                                           for run, summary in summaries]}, args.format))
    for run, summary in summaries if args.format == "text" else ():
        overall = summary["overall"]
        wait = overall["waitSeconds"]["p95"]
        stopped = "" if run.stopped in ("played out", "until") else f" (stopped: {run.stopped})"
        print(f"{run.bundle}: {overall['jobsCompleted']}/{overall['jobsSubmitted']} jobs completed, "
              f"wait p95 {'-' if wait is None else f'{wait:g}s'}, {overall['evictions']} evictions, "
              f"{len(summary['pingPong']['queues'])} ping-pong queue pairs, "
              f"{summary['virtualSeconds']:g} virtual s in {summary['wallSeconds']:.2f} s, "
              f"{summary['sessions']:,} sessions run and {summary['sessionsSkipped']:,} skipped{stopped}")
    print(f"wrote {args.out}/report.html, metrics.json, queues.csv, nodes.csv, jobs.csv", file=sys.stderr)
    return EXIT_OK


def _write_trace(doc: dict, out: str) -> int:
    import yaml

    Path(out).write_text(yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=120))
    print(f"wrote {out}: {len(doc['events'])} events, {len(doc['cluster'])} objects at the start", file=sys.stderr)
    return EXIT_OK


def cmd_trace_synth(args: argparse.Namespace) -> int:
    from fumarole.runtime.whatif.synth import synth_trace

    if args.nodes < 1:
        raise FumaroleError([file_errors.below_minimum("--nodes", 1)])
    return _write_trace(synth_trace(args.shape, args.seed, args.nodes, args.duration), args.out)


def cmd_trace_cut(args: argparse.Namespace) -> int:
    from fumarole.runtime.ingest.kube import load_cluster
    from fumarole.runtime.ingest.source import read_text
    from fumarole.runtime.whatif.synth import cut_trace, parse_distribution

    sampler = parse_distribution(args.run_time)
    if sampler is None:
        raise FumaroleError([file_errors.bad_distribution("--run-time", args.run_time)])
    cluster = load_cluster(read_text(Path(args.cluster), args.cluster), args.cluster)
    return _write_trace(cut_trace(cluster, Path(args.cluster).stem, sampler, args.seed), args.out)


def cmd_sweep(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from fumarole.runtime.cli.output import render_document
    from fumarole.runtime.cli.progress import ProgressBar
    from fumarole.runtime.whatif.sweep import distinct, load_sweep, run_sweep
    from fumarole.runtime.whatif.sweep_report import write_sweep

    require_extra("report", "sweep's summary report")
    if args.dask:
        require_extra("dask", "sweep --dask")
    runs = distinct(load_sweep(Path(args.spec)))
    if args.session_timeout is not None:
        runs = [replace(run, options=replace(run.options, session_timeout=args.session_timeout)) for run in runs]
    bar = ProgressBar(len(runs), "sweep", " replays")
    rows = run_sweep(runs, args.dask, args.workers, bar.update)
    bar.close()
    grid_keys = list(dict.fromkeys(k for run in runs for k, _ in run.arguments))
    write_sweep(Path(args.out), rows, grid_keys)
    if args.format != "text":  # the rows of results.csv, typed
        print(render_document({"replays": rows}, args.format))
    print(f"{len(rows)} replays; wrote {args.out}/results.csv and summary.html", file=sys.stderr)
    return EXIT_OK
