"""The lean core and its extras: a command whose extra is missing stops with one line naming the
``pip install`` that adds it (F006, exit 2), before any work, never with an ImportError traceback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _without(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    """Make ``import module`` fail as it does where the extra is not installed."""
    for name in list(sys.modules):
        if name == module or name.startswith(module + "."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module, None)


@pytest.mark.parametrize("argv, module, expected", [
    (["lsp", "--stdio"], "pygls", "the language server needs the 'lsp' extra (pygls is not installed)"),
    (["replay", str(ROOT / "examples/traces/two-queues.yaml"), "--out", "{tmp}"], "plotly",
     "replay's HTML report needs the 'report' extra (plotly is not installed)"),
    (["sweep", str(ROOT / "examples/sweeps/min-runtime.yaml"), "--out", "{tmp}", "--dask", "local"], "dask",
     "sweep --dask needs the 'dask' extra (dask is not installed)"),
    (["snapshot", "--kubeconfig", "{tmp}/config", "--out", "{tmp}/c.yaml"], "kubernetes",
     "reading a live cluster needs the 'kube' extra (kubernetes is not installed)"),
])
def test_a_missing_extra_is_one_line_naming_it(cli, monkeypatch, tmp_path, argv, module, expected):
    _without(monkeypatch, module)
    extra = expected.split("the '")[1].split("'")[0]
    result = cli(*[a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert result.code == 2
    assert result.err.splitlines() == [f"fumarole: error[F006]: {expected}",
                                       f"  hint: pip install 'fumarole[{extra}]'"]
    assert list(tmp_path.iterdir()) == []  # stopped before doing any work
