"""The diagnostics about a bundle archive and its signature (A codes), docs/diagnostics.md: archives
that are too big, unsafe, incomplete or altered, bundle folders that cannot be packed, and keys and
signatures that do not verify.  One constructor per problem (as ``bundle_errors.py`` for the B
codes): the message and hint are written here once, and the archive reader, the loader and the
signature check pass facts -- the archive's name, the member, the limit.

An archive's problems are about the whole file: none carries a line and column.
"""

from __future__ import annotations

from pathlib import Path

from fumarole.policy_lang.diagnostics import Diagnostic

_BUILD_HINT = "build archives with `fumarole bundle build`"


# -- A001 over a size limit ---------------------------------------------------------------------------------

def archive_file_too_big(path: str, size: int, limit: int) -> Diagnostic:
    """An archive file on disk, refused before it is read."""
    return Diagnostic("A001", f"{path} is {size} bytes, more than the limit of {limit}", path)


def archive_too_big(source: str, size: int, limit: int) -> Diagnostic:
    """Archive bytes received (an upload, a persisted last-known-good)."""
    return Diagnostic("A001", f"archive is {size} bytes, more than the limit of {limit}", source)


def unpacks_too_big(source: str, limit: int) -> Diagnostic:
    """The gzip stream decompresses past the limit (a gzip bomb stops here)."""
    return Diagnostic("A001", f"archive unpacks to more than {limit} bytes", source)


def too_many_members(source: str, limit: int) -> Diagnostic:
    return Diagnostic("A001", f"archive holds more than {limit} files", source)


def member_too_big(source: str, name: str, size: int, limit: int) -> Diagnostic:
    return Diagnostic("A001", f"member {name} is {size} bytes, more than {limit}", source)


def members_too_big(source: str, limit: int) -> Diagnostic:
    """The members' declared sizes add up past the limit (sparse members declare more than they carry)."""
    return Diagnostic("A001", f"archive files add up to more than {limit} bytes", source)


# -- A002 not a gzip or tar archive -------------------------------------------------------------------------

def not_gzip(source: str, reason: object) -> Diagnostic:
    """``reason``: the gzip reader's own words."""
    return Diagnostic("A002", f"not a gzip archive: {reason}", source,
                      hint="build archives with `fumarole bundle build DIR --out B.tar.gz`")


def not_tar(source: str, reason: object) -> Diagnostic:
    """``reason``: the tar reader's own words."""
    return Diagnostic("A002", f"not a tar archive: {reason}", source)


# -- A004 .. A006 unsafe members ----------------------------------------------------------------------------

def unsafe_member_name(source: str, name: str) -> Diagnostic:
    return Diagnostic("A004", f"unsafe member name {name!r} (absolute, '..' or empty)", source)


def reserved_member(source: str, name: str, folder: str) -> Diagnostic:
    """A member in the archive's own metadata folder that is neither the manifest nor the signature."""
    return Diagnostic("A004", f"unexpected member {name} in the reserved {folder}/ folder", source)


def member_not_unpacked(source: str, name: str, reason: object) -> Diagnostic:
    """The file system refuses the member's name (too long, ...) when the archive is unpacked to compile."""
    return Diagnostic("A004", f"member {name[:80]} cannot be unpacked: {reason}", source)


def member_not_regular(source: str, name: str, kind: str) -> Diagnostic:
    """``kind``: "link" or "special file"."""
    return Diagnostic("A005", f"member {name} is a {kind}; archives hold regular files only", source)


def member_twice(source: str, name: str) -> Diagnostic:
    return Diagnostic("A006", f"member {name} appears twice", source)


# -- A007 .. A011 the manifest and the members --------------------------------------------------------------

def member_not_json(source: str, name: str, reason: object) -> Diagnostic:
    """``reason``: the JSON reader's own words, or "nested too deeply"."""
    return Diagnostic("A007", f"{name} is not JSON: {reason}", source)


def member_not_an_object(source: str, name: str) -> Diagnostic:
    return Diagnostic("A007", f"{name} must be a JSON object", source)


def no_archive_manifest(source: str, manifest: str) -> Diagnostic:
    return Diagnostic("A007", f"no {manifest}", source, hint=_BUILD_HINT)


def archive_manifest_incomplete(source: str, manifest: str, kind: str) -> Diagnostic:
    return Diagnostic("A007", f"{manifest} needs kind {kind}, a files map and a digest", source)


def member_missing(source: str, path: str) -> Diagnostic:
    return Diagnostic("A008", f"{path} is listed in the manifest but missing", source)


def member_not_listed(source: str, path: str) -> Diagnostic:
    return Diagnostic("A008", f"{path} is in the archive but not in the manifest", source)


def member_altered(source: str, path: str) -> Diagnostic:
    return Diagnostic("A009", f"{path}: sha256 does not match the manifest (archive altered?)", source)


def digest_mismatch(source: str) -> Diagnostic:
    return Diagnostic("A010", "the manifest's bundle digest does not match its file list", source)


def file_and_folder(source: str, file: str, name: str) -> Diagnostic:
    """``file`` is a member, and ``name``, another member, needs a folder at the same path."""
    return Diagnostic("A011", f"member {file} is a file, but {name} puts a folder at the same path", source)


# -- A020 .. A022 the bundle inside ---------------------------------------------------------------------------

def not_a_bundle_folder(source: str) -> Diagnostic:
    return Diagnostic("A020", "not a bundle folder: no bundle.yaml", source)


def no_manifest(source: str, manifest: str) -> Diagnostic:
    return Diagnostic("A020", f"the archive has no {manifest} at its top level", source)


def symlinked_folder(source: str, folder: str) -> Diagnostic:
    """``folder``: relative to the bundle folder."""
    return Diagnostic("A021", f"symlinked folder {folder} in a bundle", source,
                      hint="copy the folder's files into the bundle instead")


def source_leaves_bundle(source: str, pattern: str) -> Diagnostic:
    return Diagnostic("A022", f"source pattern {pattern!r} leaves the bundle folder", source,
                      hint="use paths relative to bundle.yaml, without '..'")


# -- A030 .. A033 keys and signatures -----------------------------------------------------------------------

def key_unreadable(path: Path, reason: str | None) -> Diagnostic:
    """``reason``: the operating system's words (``strerror``)."""
    return Diagnostic("A030", f"cannot read key {path}: {reason}", str(path))


def not_a_pem_key(path: Path) -> Diagnostic:
    return Diagnostic("A030", f"{path} is not a PEM key", str(path),
                      hint="openssl genpkey -algorithm ed25519 -out key.pem; "
                           "openssl pkey -in key.pem -pubout -out key.pub")


def not_an_ed25519_private_key(path: Path) -> Diagnostic:
    """Signing needs the private half."""
    return Diagnostic("A030", f"{path} is not an Ed25519 private key", str(path))


def not_an_ed25519_key(path: Path) -> Diagnostic:
    """Verifying takes a public key or the public half of a private one."""
    return Diagnostic("A030", f"{path} is not an Ed25519 key", str(path))


def not_signed(source: str) -> Diagnostic:
    return Diagnostic("A031", "the bundle is not signed and a trusted key is configured", source,
                      hint="fumarole bundle sign B.tar.gz --key ed25519.pem")


def not_a_signature_of_this_digest(source: str) -> Diagnostic:
    """Another algorithm, or a signature made for another bundle's digest."""
    return Diagnostic("A032", "the signature is not an ed25519 signature of this bundle's digest", source)


def signature_not_base64(source: str) -> Diagnostic:
    return Diagnostic("A032", "the signature is not valid base64", source)


def signature_not_trusted(source: str, key_id: object) -> Diagnostic:
    """``key_id``: the id the signature claims ("?" when it names none)."""
    return Diagnostic("A033", f"the signature (key {key_id}) does not verify with any trusted key", source)
