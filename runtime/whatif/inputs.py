"""The bundles a what-if names: a folder, a bundle.yaml, an archive or a volcano-scheduler.conf, by path."""

from __future__ import annotations

from pathlib import Path

from fumarole.policy_lang.diagnostics import NO_POSITION, Diagnostic, FumaroleError
from fumarole.runtime.bundles.bundle import Bundle, default_bundle, load_bundle
from fumarole.runtime.bundles.loader import load_artifact, source_bytes

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz")


def load_any_bundle(text: str | None) -> Bundle:
    """A bundle folder, bundle.yaml, archive (.tar.gz) or volcano-scheduler.conf; Volcano's default for None."""
    if text is None:
        return default_bundle()
    path = Path(text)
    if not path.exists():
        raise FumaroleError([Diagnostic("F001", f"no such bundle or configuration: {path}", str(path), NO_POSITION)])
    if path.is_file() and path.name.endswith(ARCHIVE_SUFFIXES):
        return load_artifact(source_bytes(path), str(path)).bundle
    return load_bundle(path)
