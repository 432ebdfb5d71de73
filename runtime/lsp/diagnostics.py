"""Diagnostics for a document as ``fumarole check`` reports them, over the editor's unsaved buffers.

A policy file inside a bundle is checked with its bundle (its tiers, the
modules it uses, the standard library the bundle ``uses``); a manifest is
checked with its policy files; a lone policy over the standard library.
Every buffer the editor has open stands in for its file on disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from fumarole.policy_lang.diagnostics import Diagnostic
from fumarole.runtime.authoring.check import check_paths, enclosing_bundle
from fumarole.runtime.bundles.manifest import MANIFEST
from fumarole.runtime.ingest.source import unsaved_buffers


def check_target(path: Path) -> Path:
    """What to check for a document: its bundle folder when it belongs to one, else the file."""
    if path.name == MANIFEST:
        return path.parent
    if path.suffix == ".policy":
        return enclosing_bundle(path) or path
    return path


def diagnostics_by_file(path: Path, buffers: Mapping[Path, str], strict: bool = True) -> dict[Path, list[Diagnostic]]:
    """Every diagnostic of the check that covers ``path``, by absolute file (files without one map to [])."""
    target = check_target(path)
    with unsaved_buffers(buffers):
        report = check_paths([str(target)], strict=strict)
    out: dict[Path, list[Diagnostic]] = {(Path.cwd() / f).resolve(): [] for f in report.files}
    out.setdefault(path.resolve(), [])
    for d in report.diagnostics:
        out.setdefault((Path.cwd() / d.file).resolve(), []).append(d)
    return out
