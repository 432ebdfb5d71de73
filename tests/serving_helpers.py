"""Shared fixtures of the artefact, server, extender and soak tests: bundles, keys, a live service."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

import httpx
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from fumarole.runtime.authoring.scenario import decisions_as_expect
from fumarole.runtime.bundles.archive import folder_files, pack, read_archive
from fumarole.runtime.bundles.signing import sign_digest
from fumarole.runtime.framework.lifecycle import new_session, run_session
from fumarole.runtime.ingest.kube import load_cluster
from fumarole.runtime.serve.decision_log import DecisionLog
from fumarole.runtime.serve.metrics import Metrics
from fumarole.runtime.serve.registry import BundleRegistry
from fumarole.runtime.serve.server import Options, Running, create_app
from fumarole.runtime.serve.service import Service
from fumarole.runtime.serve.state import StateDir

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_CLUSTER = ROOT / "examples" / "cluster.yaml"
CASE = ROOT / "tests" / "conformance" / "cases" / "allocate" / "TestAllocate-004-two-jobs-on-one-node.yaml"
TOKEN = "s3cret-admin-token-for-tests"

GATE_POLICY = """plugin namespace_gate

# Only tasks of the listed namespaces may be placed (each revision lists others).
arg allowed: list[string] = []

on predicate(task, node):
    fail "namespace not allowed" when task.namespace not in allowed
"""

# A policy that compiles but fails while running (a missing map key): the smoke run must catch it.
FAILING_POLICY = """plugin namespace_gate

arg allowed: list[string] = []

on predicate(task, node):
    let seen: map[string, int] = {}
    fail "never" when seen[task.name] > 0
"""


# A predicate that loops for ever and checks nothing but the budget: only a deadline stops it.
SPINNING_POLICY = """plugin namespace_gate

arg allowed: list[string] = []

on predicate(task, node):
    let n = 0
    while true:
        while true:
            n += 1
"""
YAML = {"content-type": "application/yaml"}  # how a cluster dump is posted to /v1/sessions


def cluster_text() -> str:
    """The example cluster if the repository has one, else a conformance case's objects."""
    if EXAMPLE_CLUSTER.exists():
        return EXAMPLE_CLUSTER.read_text()
    return yaml.safe_dump_all(yaml.safe_load(CASE.read_text())["objects"])


def namespaces() -> list[str]:
    cluster = load_cluster(cluster_text())
    return sorted({str(p["metadata"].get("namespace") or "default") for p in cluster.pods})


def write_bundle(folder: Path, revision: str, allowed: Sequence[str], policy: str = GATE_POLICY,
                 tiers: list | None = None, actions: Sequence[str] = ("enqueue", "allocate", "backfill")) -> Path:
    """A site bundle: Volcano's default tiers plus a namespace gate allowing ``allowed``."""
    (folder / "plugins").mkdir(parents=True, exist_ok=True)
    (folder / "plugins" / "site.policy").write_text(policy)
    manifest = {
        "apiVersion": "fumarole/v1", "kind": "PolicyBundle",
        "metadata": {"name": "site", "revision": revision},
        "uses": ["volcano"], "sources": ["plugins/*.policy"], "actions": list(actions),
        "tiers": tiers if tiers is not None else [
            {"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
            {"plugins": [{"name": "overcommit"}, {"name": "drf"}, {"name": "predicates"}, {"name": "proportion"},
                         {"name": "nodeorder"}, {"name": "namespace_gate", "arguments": {"allowed": list(allowed)}}]},
        ],
    }
    (folder / "bundle.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return folder


def new_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def write_keys(folder: Path, key: Ed25519PrivateKey, stem: str = "key") -> tuple[Path, Path]:
    private, public = folder / f"{stem}.pem", folder / f"{stem}.pub"
    private.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    public.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                     serialization.PublicFormat.SubjectPublicKeyInfo))
    return private, public


def archive(folder: Path, key: Ed25519PrivateKey | None = None) -> bytes:
    files = folder_files(folder)
    if key is None:
        return pack(files)
    return pack(files, sign_digest(key, read_archive(pack(files), "x").digest))


def expected_decisions(folder: Path) -> dict:
    """What one session decides on the test cluster under the bundle in ``folder``."""
    from fumarole.runtime.bundles.bundle import load_bundle_dir

    return decisions_as_expect(run_session(new_session(load_bundle_dir(folder), load_cluster(cluster_text()))))


def make_service(initial: bytes | None, trusted: Sequence = (), state: Path | None = None) -> Service:
    """A service with ``initial`` active (None: nothing yet, as before ``Service.start``)."""
    metrics = Metrics()
    state_dir = StateDir.open(state) if state is not None else None
    registry = BundleRegistry([k.public_key() for k in trusted], state_dir, metrics)
    service = Service(registry, DecisionLog(200, state_dir.decisions_path if state_dir else None), metrics)
    if initial is not None:
        registry.activate(initial, "initial", origin="startup")
    return service


def bundle_service(folder: Path, allowed: Sequence[str] | None = None, policy: str = GATE_POLICY,
                   session_timeout: float | None = None) -> Service:
    """A service whose active bundle (revision 1, written to ``folder``) runs ``policy`` allowing
    ``allowed`` (every test namespace by default); ``session_timeout`` as `serve --session-timeout`."""
    service = make_service(archive(write_bundle(folder, "1", namespaces() if allowed is None else allowed, policy)))
    if session_timeout is not None:
        service.session_timeout = session_timeout
    return service


@contextlib.contextmanager
def serving(service: Service) -> Iterator[tuple[str, httpx.Client]]:
    """The service on a loopback port: its base URL and a client of it (generous timeout)."""
    with running(service) as url, httpx.Client(base_url=url, timeout=60) as client:
        yield url, client


@contextlib.contextmanager
def running(service: Service, options: Options = Options(admin_token=TOKEN)) -> Iterator[str]:
    """The service on an ephemeral loopback port; yields its base URL."""
    with Running(create_app(service, options)) as server:
        yield server.url


@contextlib.contextmanager
def serve_process(args: Sequence[str], ready_within: float = 120.0) -> Iterator[tuple[subprocess.Popen, str]]:
    """`fumarole serve ARGS --listen` on a free loopback port, as its own process, once /healthz answers:
    the process and its base URL.  Killed on the way out if the test left it running."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "fumarole.runtime.cli.main", "serve", *args, "--listen", f"127.0.0.1:{port}"],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + ready_within
        while True:
            try:
                if httpx.get(url + "/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() >= deadline:
                process.kill()  # first: reading the stderr of a live process would wait for it forever
                _, err = process.communicate(timeout=30)
                raise AssertionError(f"fumarole serve did not answer /healthz within {ready_within:g} s: "
                                     f"{err.decode(errors='replace')[-2000:]}")
            time.sleep(0.1)
        yield process, url
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def admin_headers() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


# -- soak: sessions from several clients while bundles are swapped -----------------------------

@dataclass
class SoakResult:
    sessions: list[tuple[str, dict]] = field(default_factory=list)  # (digest, decisions) per session
    active_seen: set[str] = field(default_factory=set)              # every active digest /v1/status showed
    failures: list[str] = field(default_factory=list)
    swap_seconds: list[float] = field(default_factory=list)         # good uploads: request sent -> active
    reject_seconds: list[float] = field(default_factory=list)       # bad uploads: request sent -> refused
    elapsed: float = 0.0


def soak(url: str, uploads: Sequence[tuple[bytes, bool]], clients: int = 4, deadline: float = 40.0,
         at_least: float = 0.0, body_format: str = "yaml", min_sessions: int = 0) -> SoakResult:
    """Run sessions from ``clients`` threads while ``uploads`` (archive, is_good) are PUT one after another
    (and for ``at_least`` seconds in all: with no uploads, a baseline).  The cluster is sent as
    YAML (what ``kubectl get -o yaml`` prints) or JSON (what a program would send)."""
    result, stop, lock = SoakResult(), threading.Event(), threading.Lock()
    if body_format == "json":
        body = json.dumps(list(yaml.safe_load_all(cluster_text()))).encode()
    else:
        body = cluster_text().encode()
    content_type = f"application/{body_format}"

    def sessions() -> None:
        with httpx.Client(base_url=url, timeout=30) as client:
            while not stop.is_set():
                response = client.post("/v1/sessions", content=body, headers={"content-type": content_type})
                with lock:
                    if response.status_code != 200:
                        result.failures.append(f"session: {response.status_code} {response.text[:200]}")
                    else:
                        answer = response.json()
                        result.sessions.append((answer["bundle"]["digest"], answer["decisions"]))

    def status() -> None:
        with httpx.Client(base_url=url, timeout=30) as client:
            while not stop.is_set():
                result.active_seen.add(client.get("/v1/status").json()["active"]["digest"])
                time.sleep(0.005)

    threads = [threading.Thread(target=sessions) for _ in range(clients)] + [threading.Thread(target=status)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    try:
        with httpx.Client(base_url=url, timeout=30, headers=admin_headers()) as admin:
            for data, good in uploads:
                if time.perf_counter() - started > deadline:
                    result.failures.append("deadline reached before every upload was made")
                    break
                sent = time.perf_counter()
                response = admin.put("/v1/bundles/active", content=data)
                took = time.perf_counter() - sent
                if good and response.status_code == 200 and response.json()["outcome"] == "activated":
                    result.swap_seconds.append(took)
                elif not good and response.status_code == 422:
                    result.reject_seconds.append(took)
                else:
                    result.failures.append(f"upload (good={good}): {response.status_code} {response.text[:200]}")
        time.sleep(max(0.0, at_least - (time.perf_counter() - started)))
        # and until ``min_sessions`` were answered (each session is a forked child: on a busy machine
        # the uploads can end first), within the deadline
        while len(result.sessions) < min_sessions and time.perf_counter() - started < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    result.elapsed = time.perf_counter() - started
    return result


def soak_plan(folder: Path, key: Ed25519PrivateKey, rounds: int) -> tuple[list[tuple[bytes, bool]], dict[str, dict]]:
    """``rounds`` x (good, good, broken): the broken third cycles through a compile error, an
    unsigned bundle, a bundle signed by an untrusted key and one altered after signing.
    Returns the uploads and, per good digest, the decisions its sessions must make."""
    ns = namespaces()
    variants = [ns] + [[n] for n in ns] + [[]]
    stranger = new_key()
    uploads: list[tuple[bytes, bool]] = []
    expected: dict[str, dict] = {}
    for i in range(rounds * 3):
        bundle = write_bundle(folder / f"r{i}", str(100 + i), variants[i % len(variants)])
        if i % 3 < 2:
            data = archive(bundle, key)
            expected[read_archive(data, "plan").digest] = expected_decisions(bundle)
            uploads.append((data, True))
            continue
        kind = (i // 3) % 4
        if kind == 0:
            (bundle / "plugins" / "site.policy").write_text(GATE_POLICY.replace("allowed\n", "alowed\n"))
            data = archive(bundle, key)
        elif kind == 1:
            data = archive(bundle)
        elif kind == 2:
            data = archive(bundle, stranger)
        else:
            signed = read_archive(archive(bundle, key), "plan")
            altered = dict(signed.files, **{"plugins/site.policy": GATE_POLICY.replace('"namespace', '"ns').encode()})
            data = pack(altered, signed.signature)
        uploads.append((data, False))
    return uploads, expected
