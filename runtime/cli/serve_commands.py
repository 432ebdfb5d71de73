"""``fumarole bundle build|sign|verify|inspect`` and ``fumarole serve``.

Kept apart from ``cli.py`` so the artefact and service commands (and their
heavier imports: cryptography, Starlette, uvicorn) load only when used.
Every failure is a FumaroleError, which ``cli.py`` prints as diagnostics
with exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.cli.exit_codes import EXIT_OK
from fumarole.runtime.cli.options import add_output_option, positive_int, session_timeout, usage_error
from fumarole.runtime.cli.scheduler_flags import add_scheduler_option_flags, long_flags, options_from_args
from fumarole.runtime.serve.contained import DEFAULT_MEMORY_BUDGET, MiB


DEFAULT_SESSION_TIMEOUT = 120.0  # seconds a served session (or an upload's smoke run) may run its policies


def _write(out: Path, data: bytes) -> None:
    """Write an archive atomically, or fail with a diagnostic."""
    from fumarole.runtime.serve.state import write_atomic

    try:
        write_atomic(out, data)
    except OSError as exc:
        raise usage_error(f"cannot write {out}: {exc.strerror}") from None


def _bundle_summary(loaded) -> str:
    bundle = loaded.bundle
    revision = f" revision {bundle.revision}" if bundle.revision else ""
    return f"{bundle.name}{revision} {loaded.digest}"


def cmd_build(args: argparse.Namespace) -> int:
    from fumarole.runtime.bundles.archive import folder_files, pack
    from fumarole.runtime.bundles.loader import load_artifact

    folder, out = Path(args.folder), Path(args.out)
    if not folder.is_dir():
        raise usage_error(f"{folder} is not a folder")
    data = pack(folder_files(folder))
    loaded = load_artifact(data, str(out))  # what is written is exactly what was verified and compiled
    _write(out, data)
    print(f"built {out}: {_bundle_summary(loaded)} ({len(loaded.bundle.library.sources)} policy files compiled)")
    return EXIT_OK


def cmd_sign(args: argparse.Namespace) -> int:
    from fumarole.runtime.bundles.archive import pack, read_archive
    from fumarole.runtime.bundles.loader import source_bytes
    from fumarole.runtime.bundles.signing import load_private_key, sign_digest

    path = Path(args.archive)
    key = load_private_key(Path(args.key))
    archive = read_archive(source_bytes(path), str(path))  # never sign an archive that does not verify
    signature = sign_digest(key, archive.digest)
    out = Path(args.out) if args.out else path
    _write(out, pack(archive.files, signature))
    print(f"signed {out}: {archive.digest} with key {signature['keyId']}")
    return EXIT_OK


def cmd_verify(args: argparse.Namespace) -> int:
    from fumarole.runtime.bundles.archive import read_archive
    from fumarole.runtime.bundles.loader import load_artifact, source_bytes
    from fumarole.runtime.bundles.signing import load_public_key

    path = Path(args.archive)
    trusted = [load_public_key(Path(k)) for k in args.key or []]
    data = source_bytes(path)
    loaded = load_artifact(data, str(path), trusted)
    if loaded.signed_by:
        signature = f"signed by trusted key {loaded.signed_by}"
    elif read_archive(data, str(path)).signature is not None:
        signature = "signed, signature not checked (give --key)"
    else:
        signature = "unsigned"
    print(f"{path}: OK {_bundle_summary(loaded)}; {signature}")
    return EXIT_OK


def cmd_inspect(args: argparse.Namespace) -> int:
    import yaml
    from fumarole.runtime.bundles.archive import read_archive
    from fumarole.runtime.bundles.manifest import MANIFEST
    from fumarole.runtime.bundles.loader import source_bytes

    path = Path(args.archive)
    archive = read_archive(source_bytes(path), str(path))
    try:
        doc = yaml.safe_load(archive.files.get(MANIFEST, b"")) or {}
    except yaml.YAMLError:
        doc = {}
    given = doc.get("metadata") if isinstance(doc, dict) else None
    meta = given if isinstance(given, dict) else {}
    info: dict[str, Any] = {
            "name": meta.get("name"), "revision": None if meta.get("revision") is None else str(meta["revision"]),
            "digest": archive.digest, "files": dict(archive.manifest["files"]),
            "signature": {k: v for k, v in archive.signature.items() if k != "signature"} if archive.signature
            else None}
    if args.format != "text":
        from fumarole.runtime.cli.output import render_document

        print(render_document(info, args.format))
        return EXIT_OK
    print(f"name:      {info['name']}\nrevision:  {info['revision'] or '(none)'}\ndigest:    {info['digest']}")
    signature = info["signature"]
    print(f"signature: {'ed25519, key ' + str(signature.get('keyId')) if signature else '(unsigned)'}")
    print("files:")
    for name, digest in sorted(info["files"].items()):
        print(f"  {digest}  {name}")
    return EXIT_OK


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[V6]:PORT`` or ``:PORT`` (all interfaces)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise usage_error(f"--listen {text!r} is not HOST:PORT")
    host = host.strip("[]") or "0.0.0.0"
    return host, int(port)


def _admin_token(path: str | None) -> str | None:
    if path is None:
        return None
    try:
        token = Path(path).read_text().strip()
    except OSError as exc:
        raise usage_error(f"cannot read {path}: {exc.strerror}") from None
    if len(token) < 16:
        raise usage_error(f"the admin token in {path} is shorter than 16 characters")
    return token


def cmd_serve(args: argparse.Namespace) -> int:
    from fumarole.runtime.bundles.signing import load_public_key
    from fumarole.runtime.serve.decision_log import DecisionLog
    from fumarole.runtime.serve.metrics import Metrics
    from fumarole.runtime.serve.registry import BundleRegistry
    from fumarole.runtime.serve.server import (
        Options,
        check_listen,
        create_app,
        listen_socket,
        serve,
    )
    from fumarole.runtime.serve.service import Service
    from fumarole.runtime.serve.state import StateDir
    from fumarole.runtime.serve.watch import Watcher

    option_flags = options_from_args(args, args.argv)  # bad flags are refused before anything starts
    host, port = parse_listen(args.listen)
    options = Options(admin_token=_admin_token(args.admin_token_file), admin_enabled=not args.no_admin)
    problem = check_listen(host, options)
    if problem:
        raise usage_error(problem)
    trusted = [load_public_key(Path(k)) for k in args.trusted_key or []]
    state = StateDir.open(Path(args.state_dir)) if args.state_dir else None
    try:
        sock = listen_socket(host, port)
    except OSError as exc:
        raise usage_error(f"cannot listen on {args.listen}: {exc.strerror}") from None
    import logging

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("fumarole: %(message)s"))
    logging.getLogger("fumarole").addHandler(handler)
    logging.getLogger("fumarole").setLevel(logging.INFO)
    metrics = Metrics()
    registry = BundleRegistry(trusted, state, metrics)
    decisions = DecisionLog(args.decision_log_size, state.decisions_path if state else None)
    service = Service(registry, decisions, metrics, option_flags, args.session_timeout,
                      args.session_memory * MiB, args.memory_budget * MiB if args.memory_budget else None)
    watcher = Watcher(registry, Path(args.watch), args.watch_interval) if args.watch else None
    try:
        service.start(Path(args.bundle) if args.bundle else None, watcher)
    except FumaroleError:
        sock.close()
        raise
    if watcher is not None:
        watcher.start()
    active = registry.active
    assert active is not None  # the service started with a bundle or raised
    print(f"fumarole: serving {active.bundle.name} revision {active.bundle.revision or '-'} ({active.digest}) "
          f"on http://{args.listen}", file=sys.stderr)
    def on_exit() -> None:
        service.stop()
        if watcher is not None:
            watcher.stop()
    serve(create_app(service, options), sock, on_exit=on_exit)
    return EXIT_OK


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register ``bundle`` and ``serve`` on the main parser's subcommands."""
    bundle = sub.add_parser("bundle", help="build, sign, verify and inspect bundle archives")
    actions = bundle.add_subparsers(dest="bundle_command", required=True, metavar="ACTION",
                                   help="what to do with a bundle")
    build = actions.add_parser("build", help="pack a bundle folder into a reproducible .tar.gz (compiled first)")
    build.add_argument("folder", help="the bundle folder (with its bundle.yaml)")
    build.add_argument("--out", required=True, metavar="FILE", help="archive to write")
    build.set_defaults(func=cmd_build)
    sign = actions.add_parser("sign", help="add an ed25519 signature over the bundle digest")
    sign.add_argument("archive", help="the bundle archive (.tar.gz) to sign")
    sign.add_argument("--key", required=True, help="ed25519 private key (PEM)")
    sign.add_argument("--out", metavar="FILE", help="write here instead of replacing the archive")
    sign.set_defaults(func=cmd_sign)
    verify = actions.add_parser("verify", help="check archive safety, digests, signature, and compile")
    verify.add_argument("archive", help="a .tar.gz (or a bundle folder)")
    verify.add_argument("--trusted-key", "--key", dest="key", action="append",
                        help="accept it only if signed by this ed25519 public key (PEM); repeatable")
    verify.set_defaults(func=cmd_verify)
    inspect = actions.add_parser("inspect", help="print manifest, revision and digest")
    inspect.add_argument("archive", help="the bundle archive (.tar.gz) to describe")
    add_output_option(inspect, ("text", "json", "yaml"))
    inspect.set_defaults(func=cmd_inspect)

    serve = sub.add_parser("serve", help="run the policy service (sessions, hot swap, Volcano extender)")
    serve.add_argument("--bundle", help="bundle folder or archive to serve when --state-dir holds none")
    serve.add_argument("--listen", default="127.0.0.1:8080", help="HOST:PORT (default 127.0.0.1:8080)")
    serve.add_argument("--state-dir", help="persist the last-known-good bundle and the decision log here")
    serve.add_argument("--watch", help="bundle folder or archive to activate whenever it changes")
    serve.add_argument("--watch-interval", type=float, default=1.0, help="seconds between looks (default 1)")
    serve.add_argument("--trusted-key", action="append", help="only activate bundles signed by this key; repeatable")
    serve.add_argument("--admin-token-file", help="bearer token for the admin endpoints")
    serve.add_argument("--no-admin", action="store_true", help="disable the admin endpoints")
    serve.add_argument("--decision-log-size", type=positive_int, default=1000, help="entries kept in memory")
    add_scheduler_option_flags(serve)
    serve.add_argument("--session-timeout", type=session_timeout, default=DEFAULT_SESSION_TIMEOUT,
                       metavar="SECONDS",
                       help="stop a session (or an upload's smoke run) with R001 when its policies run longer "
                            f"than this (default {DEFAULT_SESSION_TIMEOUT:g})")
    serve.add_argument("--session-memory", type=positive_int, default=DEFAULT_MEMORY_BUDGET // MiB, metavar="MIB",
                       help="memory a session (or a shadow session, a smoke run) may allocate beyond what the "
                            f"service holds; past it the session fails with R001 (default {DEFAULT_MEMORY_BUDGET // MiB})")
    serve.add_argument("--memory-budget", type=positive_int, default=None, metavar="MIB",
                       help="memory all the sessions, verbs and smoke runs running at once may reserve together "
                            "(each reserves --session-memory); past it new ones are refused with R001 "
                            "(default: no limit)")
    serve.set_defaults(func=cmd_serve, known_flags=long_flags(serve))
