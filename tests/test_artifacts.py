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
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
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
from fumarole.runtime.bundles.signing import key_id, sign_digest
from fumarole.runtime.cli.main import main
from serving_helpers import GATE_POLICY, archive, new_key, write_bundle, write_keys


@pytest.fixture
def bundle_dir(tmp_path: Path) -> Path:
    return write_bundle(tmp_path / "site", "7", ["ml"])


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
    assert capsys.readouterr().err.splitlines() == [
        f"{out}: error[A033]: the signature (key {key_id(key.public_key())}) does not verify with any trusted key"]
    assert main(["bundle", "verify", str(out)]) == 0
    assert "not checked" in capsys.readouterr().out
    signed = out.read_bytes()
    assert main(["bundle", "sign", str(out), "--key", str(private)]) == 0
    assert out.read_bytes() == signed  # ed25519 is deterministic: re-signing is reproducible too


# -- every refusal (A codes) through the commands users run -------------------------------------------
# Each test hands `fumarole bundle verify` (or build, sign, serve) a real bad archive, folder, key or
# signature and pins what it prints: code, file and message (an archive's problems are about the whole
# file: no line and column), the hint, and exit status 2.

def refused(cli, *args: str) -> list[str]:
    """What `fumarole ARGS` prints on stderr when it refuses; nothing on stdout, exit status 2."""
    result = cli(*args)
    assert (result.code, result.out) == (2, ""), result
    return result.err.splitlines()


def verify(cli, data: bytes, *keys: Path) -> list[str]:
    """`fumarole bundle verify t.tar.gz [--key K]...` on ``data``, run in the test's folder."""
    Path("t.tar.gz").write_bytes(data)
    return refused(cli, "bundle", "verify", "t.tar.gz", *[a for k in keys for a in ("--key", str(k))])


@pytest.fixture
def here(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_signature_moved_to_another_bundle_is_a032_and_a_forged_one_a033(cli, here: Path) -> None:
    key = new_key()
    _, public = write_keys(here, key)
    one = read_archive(archive(write_bundle(here / "one", "1", ["ml"]), key), "one")
    two = folder_files(write_bundle(here / "two", "2", ["tools"]))
    assert verify(cli, pack(two, one.signature), public) == [
        "t.tar.gz: error[A032]: the signature is not an ed25519 signature of this bundle's digest"]
    forged = dict(sign_digest(key, one.digest), digest=read_archive(pack(two), "two").digest)
    assert verify(cli, pack(two, forged), public) == [
        f"t.tar.gz: error[A033]: the signature (key {forged['keyId']}) does not verify with any trusted key"]


def test_a_signature_that_is_not_base64_is_a032(cli, here: Path, bundle_dir: Path) -> None:
    _, public = write_keys(here, new_key())
    files = folder_files(bundle_dir)
    digest = read_archive(pack(files), "t").digest
    signature = {"algorithm": "ed25519", "keyId": "0", "digest": digest, "signature": "not base64!"}
    assert verify(cli, pack(files, signature), public) == ["t.tar.gz: error[A032]: the signature is not valid base64"]


def test_keys_that_cannot_sign_or_verify_are_a030(cli, here: Path, bundle_dir: Path) -> None:
    (here / "t.tar.gz").write_bytes(archive(bundle_dir))
    (here / "README.md").write_text("not a key\n")
    _, public = write_keys(here, new_key())
    ec_public = here / "ec.pub"
    ec_public.write_bytes(ec.generate_private_key(ec.SECP256R1()).public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    assert refused(cli, "bundle", "verify", "t.tar.gz", "--key", "missing.pub") == [
        "missing.pub: error[A030]: cannot read key missing.pub: No such file or directory"]
    assert refused(cli, "bundle", "verify", "t.tar.gz", "--key", "README.md") == [
        "README.md: error[A030]: README.md is not a PEM key",
        "  hint: openssl genpkey -algorithm ed25519 -out key.pem; openssl pkey -in key.pem -pubout -out key.pub"]
    assert refused(cli, "bundle", "verify", "t.tar.gz", "--key", "ec.pub") == [
        "ec.pub: error[A030]: ec.pub is not an Ed25519 key"]
    assert refused(cli, "bundle", "sign", "t.tar.gz", "--key", "key.pub") == [
        "key.pub: error[A030]: key.pub is not an Ed25519 private key"]


def test_a_file_changed_after_build_is_a009(cli, here: Path, bundle_dir: Path) -> None:
    files = folder_files(bundle_dir)
    changed = dict(files, **{"plugins/site.policy": files["plugins/site.policy"] + b"\n# changed\n"})
    members = [(member(name), data) for name, data in changed.items()]
    assert verify(cli, raw_archive(members, files)) == [
        "t.tar.gz: error[A009]: plugins/site.policy: sha256 does not match the manifest (archive altered?)"]


def test_missing_and_unlisted_files_are_a008(cli, here: Path, bundle_dir: Path) -> None:
    files = folder_files(bundle_dir)
    members = [(member("bundle.yaml"), files["bundle.yaml"]), (member("extra"), b"x")]
    assert verify(cli, raw_archive(members, files)) == [
        "t.tar.gz: error[A008]: plugins/site.policy is listed in the manifest but missing",
        "t.tar.gz: error[A008]: extra is in the archive but not in the manifest"]


@pytest.mark.parametrize("name", ["/etc/passwd", "../escape.policy", "plugins/../../escape", "a\\..\\b", "C:x", ""])
def test_unsafe_member_names_are_a004(cli, here: Path, name: str) -> None:
    assert verify(cli, raw_archive([(member(name), b"x")], {})) == [
        f"t.tar.gz: error[A004]: unsafe member name {name!r} (absolute, '..' or empty)"]


def test_a_member_in_the_reserved_folder_is_a004(cli, here: Path, bundle_dir: Path) -> None:
    files = folder_files(bundle_dir)
    members = [(member(n), d) for n, d in files.items()] + [(member(".fumarole/evil.json"), b"{}")]
    assert verify(cli, raw_archive(members, files)) == [
        "t.tar.gz: error[A004]: unexpected member .fumarole/evil.json in the reserved .fumarole/ folder"]


def test_a_member_the_file_system_cannot_hold_is_a004(cli, here: Path, bundle_dir: Path) -> None:
    long_name = "plugins/" + "x" * 300 + ".policy"
    files = dict(folder_files(bundle_dir), **{long_name: b"plugin x\n"})
    assert verify(cli, pack(files)) == [
        f"t.tar.gz: error[A004]: member {long_name[:80]} cannot be unpacked: File name too long"]


@pytest.mark.parametrize("kind, what", [(tarfile.SYMTYPE, "a link"), (tarfile.LNKTYPE, "a link"),
                                        (tarfile.CHRTYPE, "a special file"), (tarfile.FIFOTYPE, "a special file")])
def test_links_and_special_files_are_a005(cli, here: Path, kind: bytes, what: str) -> None:
    assert verify(cli, raw_archive([(member("bundle.yaml", kind, "/etc/passwd"), b"")], {})) == [
        f"t.tar.gz: error[A005]: member bundle.yaml is {what}; archives hold regular files only"]


def test_a_member_twice_is_a006(cli, here: Path, bundle_dir: Path) -> None:
    files = folder_files(bundle_dir)
    twice = [(member("bundle.yaml"), files["bundle.yaml"]), (member("./bundle.yaml"), b"other")]
    assert verify(cli, raw_archive(twice, files)) == ["t.tar.gz: error[A006]: member bundle.yaml appears twice"]


def sparse_member(name: str, size: int) -> tuple[tarfile.TarInfo, bytes]:
    """A GNU sparse member (PAX format 0.1) that declares ``size`` bytes and carries none: what a
    hand-made archive can claim for free."""
    info = member(name)
    info.pax_headers = {"GNU.sparse.map": "0,0", "GNU.sparse.size": str(size)}
    return info, b""


def test_each_size_limit_is_a001(cli, here: Path, bundle_dir: Path) -> None:
    limits = Limits()
    with open("big.tar.gz", "wb") as big:
        big.truncate(limits.archive_bytes + 1)
    assert refused(cli, "bundle", "verify", "big.tar.gz") == [
        f"big.tar.gz: error[A001]: big.tar.gz is {limits.archive_bytes + 1} bytes, more than the limit of "
        f"{limits.archive_bytes}"]
    bomb = gzip.compress(b"\0" * (limits.unpacked_bytes + 1))
    assert verify(cli, bomb) == [f"t.tar.gz: error[A001]: archive unpacks to more than {limits.unpacked_bytes} bytes"]
    files = folder_files(bundle_dir)
    crowd = [(member(f"f{i}"), b"") for i in range(limits.files + 1)]
    assert verify(cli, raw_archive(crowd, files)) == [
        f"t.tar.gz: error[A001]: archive holds more than {limits.files} files"]
    assert verify(cli, raw_archive([sparse_member("huge", limits.file_bytes + 1)], files)) == [
        f"t.tar.gz: error[A001]: member huge is {limits.file_bytes + 1} bytes, more than {limits.file_bytes}"]
    many = [sparse_member(f"s{i}", limits.file_bytes) for i in range(limits.unpacked_bytes // limits.file_bytes + 1)]
    assert verify(cli, raw_archive(many, files)) == [
        f"t.tar.gz: error[A001]: archive files add up to more than {limits.unpacked_bytes} bytes"]


def test_received_archive_bytes_over_the_limit_are_a001(cli, here: Path) -> None:
    """Bytes the service reads without a size check of their own (the persisted last-known-good):
    the archive reader refuses them by length before unpacking, and the service has nothing to serve."""
    limits = Limits()
    (here / "state").mkdir()
    (here / "state" / "last-known-good.tar.gz").write_bytes(b"\0" * (limits.archive_bytes + 1))
    lines = refused(cli, "serve", "--state-dir", "state", "--listen", "127.0.0.1:0")
    a001 = (f"state/last-known-good.tar.gz: error[A001]: archive is {limits.archive_bytes + 1} bytes, more than the "
            f"limit of {limits.archive_bytes}")
    assert lines[-4:] == [
        "fumarole: bundle state/last-known-good.tar.gz not activated:", a001,
        "fumarole serve: error[S020]: no valid bundle to serve (last attempt: state/last-known-good.tar.gz)",
        "  hint: give --bundle, --watch, or a --state-dir holding a last-known-good"]


@pytest.mark.parametrize("data, lines", [
    (b"", ["t.tar.gz: error[A002]: not a tar archive: empty file"]),
    (b"not gzip at all", ["t.tar.gz: error[A002]: not a gzip archive: Not a gzipped file (b'no')",
                          "  hint: build archives with `fumarole bundle build DIR --out B.tar.gz`"]),
    (gzip.compress(b"not a tar" * 100), ["t.tar.gz: error[A002]: not a tar archive: invalid header"])])
def test_garbage_is_a002(cli, here: Path, data: bytes, lines: list[str]) -> None:
    assert verify(cli, data) == lines


def test_each_manifest_problem_is_a007(cli, here: Path, bundle_dir: Path) -> None:
    files = folder_files(bundle_dir)
    members = [(member(n), d) for n, d in files.items()]
    assert verify(cli, raw_archive(members)) == [
        f"t.tar.gz: error[A007]: no {MANIFEST_MEMBER}", "  hint: build archives with `fumarole bundle build`"]
    assert verify(cli, raw_archive(members + [(member(MANIFEST_MEMBER), b"{")])) == [
        f"t.tar.gz: error[A007]: {MANIFEST_MEMBER} is not JSON: Expecting property name enclosed in double quotes: "
        "line 1 column 2 (char 1)"]
    assert verify(cli, raw_archive(members + [(member(MANIFEST_MEMBER), b"[]")])) == [
        f"t.tar.gz: error[A007]: {MANIFEST_MEMBER} must be a JSON object"]
    assert verify(cli, raw_archive(members + [(member(MANIFEST_MEMBER), b'{"kind": "BundleArchive"}')])) == [
        f"t.tar.gz: error[A007]: {MANIFEST_MEMBER} needs kind BundleArchive, a files map and a digest"]


def test_a_manifest_digest_that_does_not_match_its_files_is_a010(cli, here: Path, bundle_dir: Path) -> None:
    files = folder_files(bundle_dir)
    manifest = json.dumps(dict(make_manifest(files), digest=bundle_digest({"bundle.yaml": "sha256:00"}))).encode()
    members = [(member(MANIFEST_MEMBER), manifest)] + [(member(n), d) for n, d in files.items()]
    assert verify(cli, raw_archive(members)) == [
        "t.tar.gz: error[A010]: the manifest's bundle digest does not match its file list"]


def test_a_file_where_a_folder_must_be_is_a011(cli, here: Path, bundle_dir: Path) -> None:
    files = dict(folder_files(bundle_dir), **{"plugins/site.policy/inner": b"plugin inner\n"})
    assert verify(cli, pack(files)) == [
        "t.tar.gz: error[A011]: member plugins/site.policy is a file, but plugins/site.policy/inner puts a folder "
        "at the same path"]


def test_no_bundle_yaml_is_a020_in_a_folder_and_in_an_archive(cli, here: Path, bundle_dir: Path) -> None:
    (here / "empty").mkdir()
    assert refused(cli, "bundle", "build", "empty", "--out", "e.tar.gz") == [
        "empty: error[A020]: not a bundle folder: no bundle.yaml"]
    files = folder_files(bundle_dir)
    del files["bundle.yaml"]
    assert verify(cli, pack(files)) == ["t.tar.gz: error[A020]: the archive has no bundle.yaml at its top level"]


def test_a_symlinked_folder_is_a021(cli, here: Path, bundle_dir: Path) -> None:
    (here / "elsewhere").mkdir()
    (bundle_dir / "linked").symlink_to(here / "elsewhere")
    assert refused(cli, "bundle", "build", "site", "--out", "s.tar.gz") == [
        "site: error[A021]: symlinked folder linked in a bundle",
        "  hint: copy the folder's files into the bundle instead"]


def test_source_globs_that_leave_the_bundle_are_a022(cli, here: Path, bundle_dir: Path) -> None:
    manifest = (bundle_dir / "bundle.yaml").read_text().replace("plugins/*.policy", "../../../etc/*")
    (bundle_dir / "bundle.yaml").write_text(manifest)
    assert verify(cli, archive(bundle_dir)) == [
        "t.tar.gz: error[A022]: source pattern '../../../etc/*' leaves the bundle folder",
        "  hint: use paths relative to bundle.yaml, without '..'"]


def test_compile_errors_name_the_file_inside_the_archive(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path / "bad", "1", [], GATE_POLICY.replace("task.namespace", "task.namespac"))
    with pytest.raises(FumaroleError) as err:
        load_artifact(archive(folder), "bad.tar.gz")
    diag = err.value.diagnostics[0]
    assert diag.code == "E101" and diag.file == "bad.tar.gz!/plugins/site.policy"
    assert "task.namespac" in err.value.render()
