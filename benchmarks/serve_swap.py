"""Swap latency and session throughput of `fumarole serve`, over real HTTP on loopback.

    python benchmarks/serve_swap.py [--rounds 40] [--clients 4] [--baseline 5] [--body json|yaml]

The service runs as its own process (``fumarole serve`` with a trusted key, an
admin token and a state folder), the clients are threads of this one.  First a
baseline: sessions from ``--clients`` threads for ``--baseline`` seconds with
no swap.  Then the soak of tests/test_soak.py at a larger size: the same
clients while ``--rounds`` x (good, good, broken) signed bundles are uploaded
back to back.  Swap latency is measured at the uploading client, from sending
the archive to the answer that it is active (verify, compile, smoke-run on the
last cluster, persist with fsync, swap).
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fumarole.runtime.ingest.kube import load_cluster  # noqa: E402 - after the path set-up
from serving_helpers import (  # noqa: E402
    TOKEN, archive, cluster_text, namespaces, new_key, soak, soak_plan, write_bundle, write_keys,
)


def _ms(values: list[float], q: float) -> str:
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000:.1f}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _serve(folder: Path, initial: bytes, public_key: Path) -> tuple[subprocess.Popen, str]:
    (folder / "initial.tar.gz").write_bytes(initial)
    (folder / "token").write_text(TOKEN)
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "fumarole.runtime.cli.main", "serve", "--bundle", str(folder / "initial.tar.gz"),
         "--listen", f"127.0.0.1:{port}", "--state-dir", str(folder / "state"), "--trusted-key", str(public_key),
         "--admin-token-file", str(folder / "token")],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(url + "/healthz").status_code == 200:
                return process, url
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("fumarole serve did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--baseline", type=float, default=5.0, help="seconds of sessions without swaps")
    parser.add_argument("--body", choices=("json", "yaml"), default="json", help="how clients send the cluster")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder, key = Path(tmp), new_key()
        _, public_key = write_keys(folder, key)
        uploads, _expected = soak_plan(folder, key, args.rounds)
        process, url = _serve(folder, archive(write_bundle(folder / "initial", "1", namespaces()), key), public_key)
        try:
            baseline = soak(url, [], clients=args.clients, at_least=args.baseline, body_format=args.body)
            swapping = soak(url, uploads, clients=args.clients, deadline=600, body_format=args.body)
        finally:
            process.terminate()
            process.wait(timeout=10)
    for result in (baseline, swapping):
        assert not result.failures, result.failures[:3]
    pods = len(load_cluster(cluster_text()).pods)
    print(f"cluster: {pods} pods sent as {args.body}; {args.clients} client threads in a separate process; "
          f"{os.cpu_count()} CPUs; Python {sys.version.split()[0]}")
    if args.clients:
        base_rate = len(baseline.sessions) / baseline.elapsed
        swap_rate = len(swapping.sessions) / swapping.elapsed
        print(f"baseline:       {len(baseline.sessions)} sessions in {baseline.elapsed:.1f} s = "
              f"{base_rate:.0f} sessions/s")
        print(f"while swapping: {len(swapping.sessions)} sessions in {swapping.elapsed:.1f} s = "
              f"{swap_rate:.0f} sessions/s ({swap_rate / base_rate:.0%} of baseline), 0 failed")
    good, bad = swapping.swap_seconds, swapping.reject_seconds
    print(f"swap latency (upload -> active), {len(good)} swaps: p50 {_ms(good, 0.5)} ms, p95 {_ms(good, 0.95)} ms, "
          f"max {max(good) * 1000:.1f} ms, mean {statistics.mean(good) * 1000:.1f} ms")
    print(f"refusal latency, {len(bad)} broken/unsigned/wrongly signed: p50 {_ms(bad, 0.5)} ms, "
          f"p95 {_ms(bad, 0.95)} ms")


if __name__ == "__main__":
    main()
