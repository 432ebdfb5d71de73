"""Bundle archives: reproducible builds, digests, signatures, and refusing unsafe archives."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
from pathlib import Path

import pytest
from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.bundles.archive import (
    MANIFEST_MEMBER,
    Limits,
    bundle_digest,
    folder_files,
    make_manifest,
    pack,
    read_archive,
)
from fumarole.runtime.bundles.loader import load_artifact, source_bytes
from fumarole.runtime.bundles.signing import sign_digest
from fumarole.runtime.cli.main import main
from serving_helpers import GATE_POLICY, archive, new_key, write_bundle, write_keys


@pytest.fixture
def bundle_dir(tmp_path: Path) -> Path:
    return write_bundle(tmp_path / "site", "7", ["ml"])


def found(err: pytest.ExceptionInfo) -> list[tuple[str, str, int | None, int | None, str]]:
    """Each diagnostic as (code, file, line, column, message).  An archive's problems are about the
    whole file: they carry no line and column (None), not a made-up 1:1."""
    return [(d.code, d.file, d.span.line if d.positioned else None, d.span.col if d.positioned else None,
             d.message) for d in err.value.diagnostics]


def raw_archive(members: list[tuple[tarfile.TarInfo, bytes]], manifest_files: dict[str, bytes] | None = None) -> bytes:
    """A hand-made archive (what an attacker could upload), with a valid manifest for ``manifest_files``."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        if manifest_files is not None:
            data = json.dumps(make_manifest(manifest_files)).encode()
            info = tarfile.TarInfo(MANIFEST_MEMBER)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for info, data in members:
            info.size = len(data) if info.isfile() else 0
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return buffer.getvalue()


def member(name: str, kind: bytes = tarfile.REGTYPE, target: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


# -- build -----------------------------------------------------------------------------

def test_build_is_reproducible_whatever_the_file_times(bundle_dir: Path, tmp_path: Path, capsys) -> None:
    assert main(["bundle", "build", str(bundle_dir), "--out", str(tmp_path / "a.tar.gz")]) == 0
    for path in bundle_dir.rglob("*"):
        os.utime(path, (1_000_000, 1_000_000))
    assert main(["bundle", "build", str(bundle_dir), "--out", str(tmp_path / "b.tar.gz")]) == 0
    assert (tmp_path / "a.tar.gz").read_bytes() == (tmp_path / "b.tar.gz").read_bytes()
    assert "built" in capsys.readouterr().out


def test_digest_is_sha256sum_of_the_files_and_a_folder_has_its_archives_digest(bundle_dir: Path) -> None:
    built = read_archive(source_bytes(bundle_dir), "site")
    lines = "".join(f"{hashlib.sha256((bundle_dir / p).read_bytes()).hexdigest()}  {p}\n"
                    for p in sorted(["bundle.yaml", "plugins/site.policy"]))
    assert built.digest == "sha256:" + hashlib.sha256(lines.encode()).hexdigest()
    assert built.manifest["files"]["bundle.yaml"] == "sha256:" + hashlib.sha256(
        (bundle_dir / "bundle.yaml").read_bytes()).hexdigest()
    assert load_artifact(archive(bundle_dir), "x").bundle.digest == built.digest


def test_hidden_files_are_not_packed(bundle_dir: Path) -> None:
    (bundle_dir / ".git").mkdir()
    (bundle_dir / ".git" / "HEAD").write_text("ref")
    (bundle_dir / ".site.policy.swp").write_text("junk")
    assert sorted(folder_files(bundle_dir)) == ["bundle.yaml", "plugins/site.policy"]


def test_build_refuses_a_broken_bundle(tmp_path: Path, capsys) -> None:
    folder = write_bundle(tmp_path / "bad", "1", [], GATE_POLICY.replace("task.namespace", "task.namespac"))
    assert main(["bundle", "build", str(folder), "--out", str(tmp_path / "bad.tar.gz")]) == 2
    err = capsys.readouterr().err
    assert "bad.tar.gz!/plugins/site.policy:7:" in err and "E101" in err
    assert not (tmp_path / "bad.tar.gz").exists()


def test_inspect_prints_manifest_revision_and_digest(bundle_dir: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "b.tar.gz"
    out.write_bytes(archive(bundle_dir))
    assert main(["bundle", "inspect", str(out), "--format", "json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["name"] == "site" and info["revision"] == "7" and info["signature"] is None
    assert info["digest"] == read_archive(out.read_bytes(), "b").digest
    assert set(info["files"]) == {"bundle.yaml", "plugins/site.policy"}
    assert main(["bundle", "inspect", str(out)]) == 0
    assert "revision:  7" in capsys.readouterr().out


# -- signatures ----------------------------------------------------------------------------

def test_sign_then_verify_with_the_right_key_only(bundle_dir: Path, tmp_path: Path, capsys) -> None:
    key, other = new_key(), new_key()
    private, public = write_keys(tmp_path, key)
    _, other_public = write_keys(tmp_path, other, "other")
    out = tmp_path / "b.tar.gz"
    assert main(["bundle", "build", str(bundle_dir), "--out", str(out)]) == 0
    assert main(["bundle", "verify", str(out), "--key", str(public)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"{out}: error[A031]: the bundle is not signed and a trusted key is configured",
        "  hint: fumarole bundle sign B.tar.gz --key ed25519.pem"]
    assert main(["bundle", "sign", str(out), "--key", str(private)]) == 0
    assert main(["bundle", "verify", str(out), "--key", str(public)]) == 0
    assert "signed by trusted key" in capsys.readouterr().out
    assert main(["bundle", "verify", str(out), "--key", str(other_public)]) == 2
    assert "A033" in capsys.readouterr().err
    assert main(["bundle", "verify", str(out)]) == 0
    assert "not checked" in capsys.readouterr().out
    signed = out.read_bytes()
    assert main(["bundle", "sign", str(out), "--key", str(private)]) == 0
    assert out.read_bytes() == signed  # ed25519 is deterministic: re-signing is reproducible too


def test_a_signature_moved_to_another_bundle_does_not_verify(tmp_path: Path) -> None:
    key = new_key()
    one = read_archive(archive(write_bundle(tmp_path / "one", "1", ["ml"]), key), "one")
    two = folder_files(write_bundle(tmp_path / "two", "2", ["tools"]))
    with pytest.raises(FumaroleError) as err:
        load_artifact(pack(two, one.signature), "two", [key.public_key()])
    assert found(err) == [("A032", "two", None, None, "the signature is not an ed25519 signature of this bundle's digest")]
    forged = dict(sign_digest(key, one.digest), digest=read_archive(pack(two), "two").digest)
    with pytest.raises(FumaroleError) as err:
        load_artifact(pack(two, forged), "two", [key.public_key()])
    assert found(err) == [("A033", "two", None, None,
                           f"the signature (key {forged['keyId']}) does not verify with any trusted key")]


# -- integrity and safety ---------------------------------------------------------------------

def test_a_file_changed_after_build_is_caught(bundle_dir: Path) -> None:
    files = folder_files(bundle_dir)
    changed = dict(files, **{"plugins/site.policy": files["plugins/site.policy"] + b"\n# changed\n"})
    members = [(member(name), data) for name, data in changed.items()]
    with pytest.raises(FumaroleError) as err:
        read_archive(raw_archive(members, files), "t")
    assert found(err) == [("A009", "t", None, None,
                           "plugins/site.policy: sha256 does not match the manifest (archive altered?)")]


def test_missing_and_unlisted_files_are_caught(bundle_dir: Path) -> None:
    files = folder_files(bundle_dir)
    with pytest.raises(FumaroleError) as err:
        read_archive(raw_archive([(member("bundle.yaml"), files["bundle.yaml"]), (member("extra"), b"x")], files), "t")
    assert found(err) == [("A008", "t", None, None, "plugins/site.policy is listed in the manifest but missing"),
                          ("A008", "t", None, None, "extra is in the archive but not in the manifest")]


@pytest.mark.parametrize("name", ["/etc/passwd", "../escape.policy", "plugins/../../escape", "a\\..\\b", "C:x", ""])
def test_unsafe_member_names_are_refused(name: str) -> None:
    with pytest.raises(FumaroleError) as err:
        read_archive(raw_archive([(member(name), b"x")], {}), "t")
    assert found(err) == [("A004", "t", None, None, f"unsafe member name {name!r} (absolute, '..' or empty)")]


@pytest.mark.parametrize("kind, what", [(tarfile.SYMTYPE, "a link"), (tarfile.LNKTYPE, "a link"),
                                        (tarfile.CHRTYPE, "a special file"), (tarfile.FIFOTYPE, "a special file")])
def test_links_and_special_files_are_refused(kind: bytes, what: str) -> None:
    with pytest.raises(FumaroleError) as err:
        read_archive(raw_archive([(member("bundle.yaml", kind, "/etc/passwd"), b"")], {}), "t")
    assert found(err) == [("A005", "t", None, None, f"member bundle.yaml is {what}; archives hold regular files only")]


def test_duplicate_members_are_refused(bundle_dir: Path) -> None:
    files = folder_files(bundle_dir)
    twice = [(member("bundle.yaml"), files["bundle.yaml"]), (member("./bundle.yaml"), b"other")]
    with pytest.raises(FumaroleError) as err:
        read_archive(raw_archive(twice, files), "t")
    assert found(err) == [("A006", "t", None, None, "member bundle.yaml appears twice")]


def test_size_limits(bundle_dir: Path) -> None:
    data = archive(bundle_dir)
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(data))) as tar:
        manifest = tar.getmember(MANIFEST_MEMBER).size
    for limits, message in ((Limits(archive_bytes=100), f"archive is {len(data)} bytes, more than the limit of 100"),
                            (Limits(file_bytes=10), f"member {MANIFEST_MEMBER} is {manifest} bytes, more than 10"),
                            (Limits(files=1), "archive holds more than 1 files"),
                            (Limits(unpacked_bytes=500), "archive unpacks to more than 500 bytes")):
        with pytest.raises(FumaroleError) as err:
            read_archive(data, "t", limits)
        assert found(err) == [("A001", "t", None, None, message)], limits


def test_a_gzip_bomb_stops_at_the_limit() -> None:
    bomb = gzip.compress(b"\0" * (80 * 1024 * 1024))
    assert len(bomb) < 1024 * 1024
    with pytest.raises(FumaroleError) as err:
        read_archive(bomb, "bomb")
    assert found(err) == [("A001", "bomb", None, None, f"archive unpacks to more than {Limits().unpacked_bytes} bytes")]


@pytest.mark.parametrize("data, message", [(b"", "not a tar archive: empty file"),
                                           (b"not gzip at all", "not a gzip archive: Not a gzipped file (b'no')"),
                                           (gzip.compress(b"not a tar" * 100), "not a tar archive: invalid header")])
def test_garbage_is_refused(data: bytes, message: str) -> None:
    with pytest.raises(FumaroleError) as err:
        read_archive(data, "t")
    assert found(err) == [("A002", "t", None, None, message)]


def test_an_archive_without_manifest_is_refused(bundle_dir: Path) -> None:
    files = folder_files(bundle_dir)
    with pytest.raises(FumaroleError) as err:
        read_archive(raw_archive([(member(n), d) for n, d in files.items()]), "t")
    assert found(err) == [("A007", "t", None, None, f"no {MANIFEST_MEMBER}")]


def test_reserved_folder_and_manifest_digest_are_checked(bundle_dir: Path) -> None:
    files = folder_files(bundle_dir)
    with pytest.raises(FumaroleError) as err:
        read_archive(raw_archive([(member(n), d) for n, d in files.items()] +
                                 [(member(".fumarole/evil.json"), b"{}")], files), "t")
    assert found(err) == [("A004", "t", None, None, "unexpected member .fumarole/evil.json in the reserved .fumarole/ folder")]
    manifest = dict(make_manifest(files), digest=bundle_digest({"bundle.yaml": "sha256:00"}))
    data = json.dumps(manifest).encode()
    info = member(MANIFEST_MEMBER)
    with pytest.raises(FumaroleError) as err:
        read_archive(raw_archive([(info, data)] + [(member(n), d) for n, d in files.items()]), "t")
    assert found(err) == [("A010", "t", None, None, "the manifest's bundle digest does not match its file list")]


def test_source_globs_cannot_leave_the_bundle(bundle_dir: Path) -> None:
    manifest = (bundle_dir / "bundle.yaml").read_text().replace("plugins/*.policy", "../../../etc/*")
    (bundle_dir / "bundle.yaml").write_text(manifest)
    with pytest.raises(FumaroleError) as err:
        load_artifact(archive(bundle_dir), "t")
    assert found(err) == [("A022", "t", None, None, "source pattern '../../../etc/*' leaves the bundle folder")]


def test_compile_errors_name_the_file_inside_the_archive(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path / "bad", "1", [], GATE_POLICY.replace("task.namespace", "task.namespac"))
    with pytest.raises(FumaroleError) as err:
        load_artifact(archive(folder), "bad.tar.gz")
    diag = err.value.diagnostics[0]
    assert diag.code == "E101" and diag.file == "bad.tar.gz!/plugins/site.policy"
    assert "task.namespac" in err.value.render()


def test_a_symlinked_folder_is_refused(bundle_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (bundle_dir / "linked").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(FumaroleError) as err:
        folder_files(bundle_dir)
    assert found(err) == [("A021", str(bundle_dir), None, None, "symlinked folder linked in a bundle")]
