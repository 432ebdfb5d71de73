"""``fumarole diff``: the decisions two bundles make differently on one cluster, each explained.

Exit codes: 0 (also when decisions differ, unless ``--fail-on-change``), 1
with ``--fail-on-change`` when anything differs (for CI), 2 bad input.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from fumarole.runtime.cli.exit_codes import EXIT_FAILED, EXIT_OK
from fumarole.runtime.cli.options import add_output_option, session_time

if TYPE_CHECKING:  # the command's own imports wait until it runs: `fumarole run` starts without them
    from fumarole.policy_lang.diagnostics import Diagnostic
    from fumarole.runtime.authoring.explanations import Explanation
    from fumarole.runtime.bundles.bundle import Bundle
    from fumarole.runtime.framework.session import Decisions
    from fumarole.runtime.ingest.kube import Cluster


def add_commands(sub: argparse._SubParsersAction) -> None:
    diff = sub.add_parser("diff", help="run one cluster under two bundles and show the decisions that differ")
    diff.add_argument("cluster", help="Kubernetes objects (YAML; '-' for stdin)")
    diff.add_argument("--base", required=True,
                      help="the bundle in force: a bundle folder or archive, or a volcano-scheduler.conf")
    diff.add_argument("--candidate", required=True, help="the bundle to compare with it (same kinds)")
    diff.add_argument("--trusted-key", action="append",
                      help="archives are accepted only if signed by this ed25519 public key; repeatable")
    diff.add_argument("--now", type=session_time, help="session clock (RFC 3339, e.g. 2026-11-23T18:00:00Z)")
    diff.add_argument("--fail-on-change", action="store_true", help="exit 1 when any decision differs (for CI)")
    add_output_option(diff, ("table", "json", "yaml"))
    diff.set_defaults(func=cmd_diff)


def cmd_diff(args: argparse.Namespace) -> int:
    from fumarole.runtime.authoring.decision_diff import diff_decisions, diff_json
    from fumarole.runtime.cli.output import render_diff, render_document
    from fumarole.runtime.cli.sessions import read_cluster, show_warnings

    cluster, text = read_cluster(args.cluster)
    base = _side(args.base, args, cluster, text)
    show_warnings((*base.bundle.warnings, *cluster.warnings_for(base.bundle.scheduler_options), *base.warnings))
    candidate = _side(args.candidate, args, cluster, text)
    show_warnings((*candidate.bundle.warnings, *(w for w in candidate.warnings if w not in base.warnings)))
    diff = diff_decisions(base.decisions, candidate.decisions)
    if args.format == "table":
        print(render_diff(diff, base.heading, candidate.heading, base.explanations, candidate.explanations))
    else:
        document = diff_json(diff, base.explanations, candidate.explanations)
        document["base"], document["candidate"] = base.identity, candidate.identity
        print(render_document(document, args.format))
    return EXIT_FAILED if args.fail_on_change and diff.changed else EXIT_OK


class _Side:
    """One bundle's session on the cluster: its decisions and their explanations."""

    def __init__(self, source: str, bundle: Bundle, decisions: Decisions, explanations: list[Explanation],
                 warnings: list[Diagnostic]) -> None:
        self.source, self.bundle = source, bundle
        self.decisions, self.explanations = decisions, explanations
        self.warnings = warnings  # what the session found opening (lifecycle.open_session)

    @property
    def heading(self) -> str:
        revision = f" revision {self.bundle.revision}" if self.bundle.revision else ""
        return f"{self.source} (bundle {self.bundle.name}{revision})"

    @property
    def identity(self) -> dict[str, str]:
        return {"source": self.source, "bundle": self.bundle.name, "revision": self.bundle.revision,
                "digest": self.bundle.digest}


def _side(source: str, args: argparse.Namespace, cluster: Cluster, text: str) -> _Side:
    from fumarole.runtime.authoring.explanations import Explainer, relabel
    from fumarole.runtime.framework.lifecycle import run_session
    from fumarole.runtime.whatif.inputs import bundle_at

    bundle, label = bundle_at(Path(source), args.trusted_key or [])
    explainer = Explainer(bundle)
    session = explainer.session(cluster, args.now)
    decisions = run_session(session, args.cluster, {args.cluster: text}, label)
    return _Side(source, bundle, decisions, relabel(explainer.explain(session, decisions), label), session.warnings)
