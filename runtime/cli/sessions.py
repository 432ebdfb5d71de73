"""What ``run`` and ``diff`` share: a cluster from a file (the session's life is
``framework/lifecycle.py``'s)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterable

from fumarole.policy_lang.diagnostics import Diagnostic

from fumarole.runtime.ingest.kube import Cluster, load_cluster
from fumarole.runtime.ingest.source import read_text


def read_cluster(name: str) -> tuple[Cluster, str]:
    """The cluster dump ``name`` ('-': stdin) and its text (its warnings depend on the scheduler
    options: ``Cluster.warnings_for``)."""
    text = read_text(Path("/dev/stdin") if name == "-" else Path(name), name)
    return load_cluster(text, name), text


def show_warnings(warnings: Iterable[Diagnostic]) -> None:
    """What loaded but deserves a look (a bundle's ignored arguments, a cluster's oddities), one line each
    on stderr: the decisions on stdout stay clean."""
    for warning in warnings:
        print(warning.headline(), file=sys.stderr)
