"""Bundle archives: a bundle folder packed into a reproducible, verifiable ``.tar.gz``.

An archive holds the bundle's files (``bundle.yaml`` and its sources) plus
``.fumarole/manifest.json``, which lists every file's sha256 and the bundle
digest, and optionally ``.fumarole/signature.json`` (see ``signing.py``).  The
bundle digest is the sha256 of ``sha256sum``-style lines (``<hex>  <path>``,
sorted by path), so anyone can recompute it from an unpacked folder with
standard tools, and a folder and the archive built from it have one digest.

Reading never trusts the archive: the whole input is size-bounded before it is
decompressed (a gzip bomb stops at the limit), every member must be a regular
file with a relative, ``..``-free name, links and devices are refused, and
every file must match the manifest.  Nothing is ever extracted by ``tarfile``
itself; callers get the file contents in memory.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.bundles import archive_errors

META_DIR = ".fumarole"
MANIFEST_MEMBER = f"{META_DIR}/manifest.json"
SIGNATURE_MEMBER = f"{META_DIR}/signature.json"
MANIFEST_KIND = "BundleArchive"


@dataclass(frozen=True)
class Limits:
    """Upper bounds on what one archive may hold; exceeding any one rejects it."""

    archive_bytes: int = 16 * 1024 * 1024
    unpacked_bytes: int = 64 * 1024 * 1024
    file_bytes: int = 8 * 1024 * 1024
    files: int = 1000


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class Archive:
    """The verified content of one archive: files by relative path, manifest, signature."""

    files: Mapping[str, bytes]
    manifest: Mapping
    signature: Mapping | None

    @property
    def digest(self) -> str:
        return str(self.manifest["digest"])


def file_sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def bundle_digest(file_hashes: Mapping[str, str]) -> str:
    """sha256 over ``<hex>  <path>`` lines sorted by path (the output of ``sha256sum``)."""
    lines = "".join(f"{file_hashes[p].removeprefix('sha256:')}  {p}\n" for p in sorted(file_hashes))
    return "sha256:" + hashlib.sha256(lines.encode()).hexdigest()


def make_manifest(files: Mapping[str, bytes]) -> dict:
    hashes = {path: file_sha256(files[path]) for path in sorted(files)}
    return {"apiVersion": "fumarole/v1", "kind": MANIFEST_KIND, "files": hashes, "digest": bundle_digest(hashes)}


def folder_files(folder: Path) -> dict[str, bytes]:
    """Every non-hidden file under a bundle folder, by POSIX relative path.

    Hidden names are skipped (``.git``, editor files, and the ``..data``
    indirection of a mounted ConfigMap, whose visible entries are symlinks to
    files: those are read through).  A symlinked folder is refused, since it
    could point anywhere.
    """
    source = str(folder)
    if not (folder / "bundle.yaml").is_file():
        raise FumaroleError([archive_errors.not_a_bundle_folder(source)])
    out: dict[str, bytes] = {}
    for root, dirs, names in os.walk(folder):
        here = Path(root)
        for d in list(dirs):
            if d.startswith("."):
                dirs.remove(d)
            elif (here / d).is_symlink():
                raise FumaroleError([archive_errors.symlinked_folder(source, str((here / d).relative_to(folder)))])
        for name in names:
            if name.startswith("."):
                continue
            path = here / name
            if path.is_file():
                out[path.relative_to(folder).as_posix()] = path.read_bytes()
    return out


def _tar_member(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), 0, 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    tar.addfile(info, io.BytesIO(data))


def pack(files: Mapping[str, bytes], signature: Mapping | None = None) -> bytes:
    """A reproducible archive: fixed order, times, owners and modes, and a gzip header without a name or time."""
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
            _tar_member(tar, MANIFEST_MEMBER, _canonical_json(make_manifest(files)))
            if signature is not None:
                _tar_member(tar, SIGNATURE_MEMBER, _canonical_json(signature))
            for path in sorted(files):
                _tar_member(tar, path, files[path])
    return buffer.getvalue()


def _canonical_json(value: Mapping) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True) + "\n").encode()


# -- reading -------------------------------------------------------------------------

def _gunzip(data: bytes, limits: Limits, source: str) -> bytes:
    if len(data) > limits.archive_bytes:
        raise FumaroleError([archive_errors.archive_too_big(source, len(data), limits.archive_bytes)])
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as gz:
            raw = gz.read(limits.unpacked_bytes + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise FumaroleError([archive_errors.not_gzip(source, exc)]) from None
    if len(raw) > limits.unpacked_bytes:
        raise FumaroleError([archive_errors.unpacks_too_big(source, limits.unpacked_bytes)])
    return raw


def _safe_name(name: str) -> str | None:
    """The normalised relative path, or None when the name could escape or confuse."""
    if not name or "\0" in name or "\\" in name or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return None
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


def _members(raw: bytes, limits: Limits, source: str) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    total = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
            for member in tar:
                name = _safe_name(member.name)
                if name is None:
                    raise FumaroleError([archive_errors.unsafe_member_name(source, member.name)])
                if member.isdir():
                    continue
                if not member.isfile():
                    kind = "link" if member.issym() or member.islnk() else "special file"
                    raise FumaroleError([archive_errors.member_not_regular(source, name, kind)])
                if name in out:
                    raise FumaroleError([archive_errors.member_twice(source, name)])
                if len(out) >= limits.files:
                    raise FumaroleError([archive_errors.too_many_members(source, limits.files)])
                if member.size > limits.file_bytes:
                    raise FumaroleError([archive_errors.member_too_big(source, name, member.size, limits.file_bytes)])
                total += member.size
                if total > limits.unpacked_bytes:
                    raise FumaroleError([archive_errors.members_too_big(source, limits.unpacked_bytes)])
                handle = tar.extractfile(member)
                out[name] = handle.read() if handle is not None else b""
    except tarfile.TarError as exc:
        raise FumaroleError([archive_errors.not_tar(source, exc)]) from None
    _check_file_folder_clash(out, source)
    return out


def _check_file_folder_clash(members: dict[str, bytes], source: str) -> None:
    """A name used both as a file and as a folder (``a.policy`` and ``a.policy/x``) cannot be unpacked."""
    for name in sorted(members):
        parts = name.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if folder in members:
                raise FumaroleError([archive_errors.file_and_folder(source, folder, name)])


def _json_member(members: dict[str, bytes], name: str, source: str) -> dict | None:
    data = members.pop(name, None)
    if data is None:
        return None
    try:
        value = json.loads(data)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        reason = "nested too deeply" if isinstance(exc, RecursionError) else exc
        raise FumaroleError([archive_errors.member_not_json(source, name, reason)]) from None
    if not isinstance(value, dict):
        raise FumaroleError([archive_errors.member_not_an_object(source, name)])
    return value


def read_archive(data: bytes, source: str, limits: Limits = DEFAULT_LIMITS) -> Archive:
    """Unpack an archive in memory and check it against its manifest; raise FumaroleError otherwise."""
    members = _members(_gunzip(data, limits, source), limits, source)
    manifest = _json_member(members, MANIFEST_MEMBER, source)
    signature = _json_member(members, SIGNATURE_MEMBER, source)
    extra_meta = sorted(n for n in members if n.split("/")[0] == META_DIR)
    if extra_meta:
        raise FumaroleError([archive_errors.reserved_member(source, extra_meta[0], META_DIR)])
    if manifest is None:
        raise FumaroleError([archive_errors.no_archive_manifest(source, MANIFEST_MEMBER)])
    listed = manifest.get("files")
    if manifest.get("kind") != MANIFEST_KIND or not isinstance(listed, dict) or \
            not isinstance(manifest.get("digest"), str):
        raise FumaroleError([archive_errors.archive_manifest_incomplete(source, MANIFEST_MEMBER, MANIFEST_KIND)])
    diags = [archive_errors.member_missing(source, p) for p in sorted(set(listed) - set(members))]
    diags += [archive_errors.member_not_listed(source, p) for p in sorted(set(members) - set(listed))]
    diags += [archive_errors.member_altered(source, p)
              for p in sorted(set(members) & set(listed)) if file_sha256(members[p]) != listed[p]]
    if not diags and bundle_digest(listed) != manifest["digest"]:
        diags.append(archive_errors.digest_mismatch(source))
    if diags:
        raise FumaroleError(diags)
    return Archive(members, manifest, signature)
