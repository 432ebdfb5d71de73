"""What ``run`` and ``diff`` share: a cluster from a file, a session run to its decisions."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.framework.namespace import PolicyRuntimeError
from fumarole.runtime.framework.session import Decisions, Session
from fumarole.runtime.ingest.kube import Cluster, load_cluster
from fumarole.runtime.ingest.source import read_text

if TYPE_CHECKING:
    from fumarole.runtime.whatif.inputs import Label


def read_cluster(name: str) -> tuple[Cluster, str]:
    """The cluster dump ``name`` ('-': stdin) and its text (its warnings depend on the scheduler
    options: ``Cluster.warnings_for``)."""
    text = read_text(Path("/dev/stdin") if name == "-" else Path(name), name)
    return load_cluster(text, name), text


def decide(session: Session, cluster_name: str, text: str, label: Label = str) -> Decisions:
    """Open, run and close ``session``: a cluster Volcano would refuse (a queue hierarchy with a
    cycle) is an error naming the dump; a policy failure names its file as ``label`` shows it."""
    try:
        session.open()
        if session.problems:
            raise FumaroleError([p.diagnostic(cluster_name) for p in session.problems], {cluster_name: text})
        session.run_actions()
        return session.close()
    except PolicyRuntimeError as exc:
        exc.file = label(exc.file) if exc.file else exc.file
        raise
