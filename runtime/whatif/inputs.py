"""The bundles a what-if names: a folder, a bundle.yaml, an archive or a volcano-scheduler.conf, by path."""

from __future__ import annotations

import tarfile
from pathlib import Path
from typing import Callable, Sequence

from fumarole.policy_lang import file_errors
from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.bundles.bundle import Bundle, bundle_from_volcano_conf, default_bundle, load_bundle
from fumarole.runtime.bundles.manifest import MANIFEST

GZIP_MAGIC = b"\x1f\x8b"

Label = Callable[[str], str]  # how a policy file's name is shown (an archive's files as ARCHIVE!/path)


def load_any_bundle(text: str | None) -> Bundle:
    """A bundle folder, bundle.yaml, archive or volcano-scheduler.conf; Volcano's default for None."""
    if text is None:
        return default_bundle()
    return bundle_at(Path(text))[0]


def bundle_at(path: Path, trusted_keys: Sequence[str] = ()) -> tuple[Bundle, Label]:
    """A bundle folder, its bundle.yaml, an archive (verified exactly as ``serve`` verifies it,
    signed by one of ``trusted_keys`` when any is given) or a volcano-scheduler.conf; and how to
    show its policy files' names."""
    if not path.exists():
        raise FumaroleError([file_errors.no_bundle_or_configuration(path)])
    if path.is_dir() or path.name == MANIFEST:
        return load_bundle(path), str
    if _is_archive(path):
        from fumarole.runtime.bundles.loader import load_artifact, source_bytes
        from fumarole.runtime.bundles.signing import load_public_key

        trusted = [load_public_key(Path(k)) for k in trusted_keys]
        loaded = load_artifact(source_bytes(path), str(path), trusted)
        return loaded.bundle, loaded.label
    return bundle_from_volcano_conf(path), str


def _is_archive(path: Path) -> bool:
    """gzip or tar by content, whatever the file is called."""
    try:
        with path.open("rb") as file:
            if file.read(2) == GZIP_MAGIC:
                return True
        return tarfile.is_tarfile(path)
    except OSError:
        return False  # reported by the configuration reader, with the path
