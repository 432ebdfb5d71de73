"""From archive bytes to a compiled, immutable Bundle: the one path every bundle takes.

Uploads, the watched folder, ``--bundle`` and the persisted last-known-good all
go through :func:`load_artifact`: archive safety and digests
(``artifacts.py``), the signature when trusted keys are configured
(``signing.py``), then the manifest schema and every policy checked and
compiled (``manifest.py``, ``library.py``, ``bundle.py``).  A folder is packed
in memory first, so a folder and the archive built from it have the same
digest and are verified alike.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Sequence

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from fumarole.policy_lang import file_errors
from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.bundles import archive_errors
from fumarole.runtime.bundles.archive import (
    DEFAULT_LIMITS,
    Archive,
    Limits,
    folder_files,
    pack,
    read_archive,
)
from fumarole.runtime.bundles.bundle import Bundle, load_bundle_dir
from fumarole.runtime.bundles.manifest import MANIFEST
from fumarole.runtime.bundles.signing import verify_signature
from fumarole.runtime.ingest.source import NotText, decode
from fumarole.runtime.ingest.yamlpos import YamlError, load


@dataclass(frozen=True)
class LoadedBundle:
    """A verified, compiled bundle and the exact archive bytes it came from."""

    bundle: Bundle
    archive: bytes
    signed_by: str | None
    source: str
    compiled_from: str

    @property
    def digest(self) -> str:
        return self.bundle.digest

    def label(self, file: str) -> str:
        """A policy file name as users should read it (for errors raised while sessions run)."""
        return archive_label(file, self.compiled_from, self.source)


def source_bytes(path: Path, limits: Limits = DEFAULT_LIMITS) -> bytes:
    """The archive bytes of a bundle folder (packed in memory) or of an archive file."""
    if path.is_dir():
        return pack(folder_files(path))
    try:
        size = path.stat().st_size
        if size > limits.archive_bytes:
            raise FumaroleError([archive_errors.archive_file_too_big(str(path), size, limits.archive_bytes)])
        return path.read_bytes()
    except OSError as exc:
        raise FumaroleError([file_errors.unreadable(path, exc.strerror, str(path))]) from None


def _check_source_patterns(archive: Archive, source: str) -> None:
    """Source globs must stay inside the bundle: an upload must not compile (and quote) host files."""
    try:
        doc = load(decode(archive.files[MANIFEST]))
    except (YamlError, NotText):
        return  # the bundle loader reports the problem with its position
    patterns = doc.get("sources") if isinstance(doc, dict) else None
    for pattern in patterns if isinstance(patterns, list) else []:
        text = str(pattern)
        if text.startswith(("/", "\\")) or ".." in PurePosixPath(text).parts or "\\" in text:
            raise FumaroleError([archive_errors.source_leaves_bundle(source, text)])


def archive_label(file: str, folder: str, source: str) -> str:
    """``ARCHIVE!/path`` for a file of the temporary folder an archive was compiled in."""
    try:
        return f"{source}!/{Path(file).resolve().relative_to(folder).as_posix()}"
    except (ValueError, OSError):
        return file


def _relabel(err: FumaroleError, folder: str, source: str) -> FumaroleError:
    """Name the archive's files as ``ARCHIVE!/path`` everywhere: the compile folder is the service's business."""
    def hide(text: str) -> str:
        return text.replace(folder + "/", f"{source}!/").replace(folder, f"{source}!")
    diags = [replace(d, file=archive_label(d.file, folder, source), message=hide(d.message),
                     hint=hide(d.hint) if d.hint else d.hint)
             for d in err.diagnostics]
    return FumaroleError(diags, {archive_label(k, folder, source): v for k, v in err.sources.items()})


def compile_archive(archive: Archive, source: str, workdir: Path | None = None) -> tuple[Bundle, str]:
    """Compile verified archive content in a temporary folder, removed afterwards.

    The folder is made in ``workdir`` when given (``serve`` passes a folder of its state
    directory, which it empties at start: a kill -9 mid-compile leaves nothing in the system's
    temporary folder), else in the system's temporary folder.  Returns the Bundle, whose digest
    becomes the archive's bundle digest, and the folder's name, which compiled policies keep as
    their file name (see :func:`archive_label`).
    """
    if MANIFEST not in archive.files:
        raise FumaroleError([archive_errors.no_manifest(source, MANIFEST)])
    _check_source_patterns(archive, source)
    folder = Path(tempfile.mkdtemp(prefix="fumarole-bundle-", dir=workdir)).resolve()
    try:
        for name, data in archive.files.items():
            target = folder / name
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            except OSError as exc:  # a name too long for the file system, ...
                raise FumaroleError([archive_errors.member_not_unpacked(source, name, exc.strerror or exc)]) from None
        try:
            bundle = load_bundle_dir(folder)
        except FumaroleError as err:
            raise _relabel(err, str(folder), source) from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return replace(bundle, digest=archive.digest), str(folder)


def load_artifact(data: bytes, source: str, trusted: Sequence[Ed25519PublicKey] = (),
                  limits: Limits = DEFAULT_LIMITS, workdir: Path | None = None) -> LoadedBundle:
    """Verify (safety, digests, signature if ``trusted``) and compile (in ``workdir``, see
    :func:`compile_archive`); raise FumaroleError on any failure."""
    archive = read_archive(data, source, limits)
    signed_by = verify_signature(archive.signature, archive.digest, trusted, source) if trusted else None
    bundle, folder = compile_archive(archive, source, workdir)
    return LoadedBundle(bundle, data, signed_by, source, folder)
