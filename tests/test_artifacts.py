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


def codes(err: pytest.ExceptionInfo) -> list[str]:
    return [d.code for d in err.value.diagnostics]


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
    assert "A031" in capsys.readouterr().err
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
    assert codes(err) == ["A032"]
    forged = dict(sign_digest(key, one.digest), digest=read_archive(pack(two), "two").digest)
    with pytest.raises(FumaroleError) as err:
        load_artifact(pack(two, forged), "two", [key.public_key()])
    assert codes(err) == ["A033"]


# -- integrity and safety ---------------------------------------------------------------------

def test_a_file_changed_after_build_is_caught(bundle_dir: Path) -> None:
    files = folder_files(bundle_dir)
    changed = dict(files, **{"plugins/site.policy": files["plugins/site.policy"] + b"\n# changed\n"})
    members = [(member(name), data) for name, data in changed.items()]
    with pytest.raises(FumaroleError) as err:
        read_archive(raw_archive(members, files), "t")
    assert codes(err) == ["A009"]


def test_missing_and_unlisted_files_are_caught(bundle_dir: Path) -> None:
    files = folder_files(bundle_dir)
    with pytest.raises(FumaroleError) as err:
        read_archive(raw_archive([(member("bundle.yaml"), files["bundle.yaml"]), (member("extra"), b"x")], files), "t")
    assert codes(err) == ["A008", "A008"]


@pytest.mark.parametrize("name", ["/etc/passwd", "../escape.policy", "plugins/../../escape", "a\\..\\b", "C:x", ""])
def test_unsafe_member_names_are_refused(name: str) -> None:
    with pytest.raises(FumaroleError) as err:
        read_archive(raw_archive([(member(name), b"x")], {}), "t")
    assert codes(err) == ["A004"]


@pytest.mark.parametrize("kind", [tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.CHRTYPE, tarfile.FIFOTYPE])
def test_links_and_special_files_are_refused(kind: bytes) -> None:
    with pytest.raises(FumaroleError) as err:
        read_archive(raw_archive([(member("bundle.yaml", kind, "/etc/passwd"), b"")], {}), "t")
    assert codes(err) == ["A005"]


def test_duplicate_members_are_refused(bundle_dir: Path) -> None:
    files = folder_files(bundle_dir)
    twice = [(member("bundle.yaml"), files["bundle.yaml"]), (member("./bundle.yaml"), b"other")]
    with pytest.raises(FumaroleError) as err:
        read_archive(raw_archive(twice, files), "t")
    assert codes(err) == ["A006"]


def test_size_limits(bundle_dir: Path) -> None:
    data = archive(bundle_dir)
    for limits in (Limits(archive_bytes=100), Limits(file_bytes=10), Limits(files=1), Limits(unpacked_bytes=500)):
        with pytest.raises(FumaroleError) as err:
            read_archive(data, "t", limits)
        assert codes(err) == ["A001"], limits


def test_a_gzip_bomb_stops_at_the_limit() -> None:
    bomb = gzip.compress(b"\0" * (80 * 1024 * 1024))
    assert len(bomb) < 1024 * 1024
    with pytest.raises(FumaroleError) as err:
        read_archive(bomb, "bomb")
    assert codes(err) == ["A001"]


@pytest.mark.parametrize("data", [b"", b"not gzip at all", gzip.compress(b"not a tar" * 100)])
def test_garbage_is_refused(data: bytes) -> None:
    with pytest.raises(FumaroleError) as err:
        read_archive(data, "t")
    assert codes(err)[0] in ("A002", "A007")


def test_an_archive_without_manifest_is_refused(bundle_dir: Path) -> None:
    files = folder_files(bundle_dir)
    with pytest.raises(FumaroleError) as err:
        read_archive(raw_archive([(member(n), d) for n, d in files.items()]), "t")
    assert codes(err) == ["A007"]


def test_reserved_folder_and_manifest_digest_are_checked(bundle_dir: Path) -> None:
    files = folder_files(bundle_dir)
    with pytest.raises(FumaroleError) as err:
        read_archive(raw_archive([(member(n), d) for n, d in files.items()] +
                                 [(member(".fumarole/evil.json"), b"{}")], files), "t")
    assert codes(err) == ["A004"]
    manifest = dict(make_manifest(files), digest=bundle_digest({"bundle.yaml": "sha256:00"}))
    data = json.dumps(manifest).encode()
    info = member(MANIFEST_MEMBER)
    with pytest.raises(FumaroleError) as err:
        read_archive(raw_archive([(info, data)] + [(member(n), d) for n, d in files.items()]), "t")
    assert codes(err) == ["A010"]


def test_source_globs_cannot_leave_the_bundle(bundle_dir: Path) -> None:
    manifest = (bundle_dir / "bundle.yaml").read_text().replace("plugins/*.policy", "../../../etc/*")
    (bundle_dir / "bundle.yaml").write_text(manifest)
    with pytest.raises(FumaroleError) as err:
        load_artifact(archive(bundle_dir), "t")
    assert codes(err) == ["A022"]


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
    assert codes(err) == ["A021"]
