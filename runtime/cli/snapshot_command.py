"""``fumarole snapshot`` and the live-cluster options of ``fumarole run`` (``--kubeconfig``).

A snapshot is written as the cluster file ``kubectl get -o yaml`` would give
(one ``kind: List``) and, when the cluster has Volcano's scheduler ConfigMap,
its ``volcano-scheduler.conf`` beside it; ``run --kubeconfig`` decides on the
same objects and, unless ``--config`` or ``--bundle`` says otherwise, with the
cluster's own scheduler configuration.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from fumarole.runtime.cli.exit_codes import EXIT_OK
from fumarole.runtime.cli.options import usage_error
from fumarole.runtime.ingest.snapshot import DEFAULT_CONFIGMAP

if TYPE_CHECKING:
    from fumarole.runtime.ingest.snapshot import Snapshot


def add_live_cluster_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kubeconfig", metavar="FILE", help="read the cluster from the API server this kubeconfig "
                                                             "names (read-only: list and get); default, as "
                                                             "kubectl: $KUBECONFIG, else ~/.kube/config")
    parser.add_argument("--context", help="the kubeconfig context to use (default: its current context)")
    parser.add_argument("--scheduler-configmap", default=DEFAULT_CONFIGMAP, metavar="NAMESPACE/NAME",
                        help=f"Volcano's scheduler ConfigMap (default {DEFAULT_CONFIGMAP})")


def add_command(sub: argparse._SubParsersAction) -> None:
    snapshot = sub.add_parser("snapshot", help="write a live cluster's objects as a cluster file",
                              description="List nodes, pods, PodGroups, Queues, PriorityClasses and HyperNodes "
                                          "and get the scheduler ConfigMap (read-only), as a cluster file "
                                          "that run, test and replay take.")
    add_live_cluster_options(snapshot)
    snapshot.add_argument("-o", "--out", metavar="FILE",
                          help="the cluster file to write (default: standard output); the scheduler "
                               "configuration goes beside it as volcano-scheduler.conf")
    snapshot.set_defaults(func=cmd_snapshot)


def resolve_kubeconfig(flag: str | None) -> str:
    """The kubeconfig as kubectl finds it: ``--kubeconfig``, else ``$KUBECONFIG`` (a list of files
    separated by the OS's path separator, merged by the client), else ``~/.kube/config``."""
    if flag:
        return flag
    listed = os.environ.get("KUBECONFIG", "")
    if listed:
        return listed
    default = Path.home() / ".kube" / "config"
    if default.is_file():
        return str(default)
    raise usage_error("no kubeconfig: give --kubeconfig FILE, set $KUBECONFIG, or write ~/.kube/config")


def live_snapshot(args: argparse.Namespace) -> Snapshot:
    """The live cluster's objects (with node metrics where the configuration names a source);
    ``args.kubeconfig`` is left naming the kubeconfig that was read."""
    from fumarole.runtime.ingest.snapshot import take

    args.kubeconfig = resolve_kubeconfig(args.kubeconfig)
    snapshot = take(args.kubeconfig, args.context, args.scheduler_configmap)
    for note in snapshot.notes:  # the metrics source gave less than asked; the snapshot is still whole
        print(f"{args.kubeconfig}: warning: {note}", file=sys.stderr)
    return snapshot


def dumped(snapshot: Snapshot) -> str:
    import yaml

    return yaml.safe_dump(snapshot.objects, sort_keys=False, default_flow_style=False, allow_unicode=True)


def cmd_snapshot(args: argparse.Namespace) -> int:
    snapshot = live_snapshot(args)
    text = dumped(snapshot)
    if not args.out:
        sys.stdout.write(text)
        return EXIT_OK
    from fumarole.runtime.serve.state import write_atomic

    out = Path(args.out)
    write_atomic(out, text.encode())
    written = [f"{out} ({len(snapshot.objects['items'])} objects)"]
    if snapshot.scheduler_conf is not None:
        conf = out.with_name("volcano-scheduler.conf")
        write_atomic(conf, snapshot.scheduler_conf.encode())
        written.append(str(conf))
    print("wrote " + " and ".join(written), file=sys.stderr)
    return EXIT_OK
