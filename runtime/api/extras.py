"""The optional parts of fumarole and the pip extra that installs each.

The core (``run``, ``check``, ``fmt``, ``test``, ``bundle``, ``serve``) needs only the
core dependencies, so a CI job that checks policies installs in seconds.  Plots,
Dask sweeps, live clusters and the language server pull in large libraries; each
lives behind an extra, and a command that needs a missing one stops with one line
(F006) naming the ``pip install`` that adds it, never an ImportError traceback.
This module sits in the lowest stage so that every stage can ask for an extra.
"""

from __future__ import annotations

import importlib

from fumarole.policy_lang import file_errors
from fumarole.policy_lang.diagnostics import FumaroleError

# extra -> the modules it provides (the names imported, not the distribution names)
EXTRAS: dict[str, tuple[str, ...]] = {
    "report": ("plotly",),
    "dask": ("dask", "distributed"),
    "kube": ("kubernetes",),
    "lsp": ("pygls", "lsprotocol"),
}


def require_extra(extra: str, feature: str) -> None:
    """Stop with F006 unless every module of ``extra`` imports; ``feature`` says what needed it."""
    for module in EXTRAS[extra]:
        try:
            importlib.import_module(module)
        except ImportError:
            raise FumaroleError([file_errors.extra_missing(feature, extra, module)]) from None
