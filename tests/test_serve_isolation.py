"""A session that never yields, eats memory or fails can block nothing: not /healthz, other sessions, shutdown.

The sessions here misbehave below the policy budget (a Python loop that checks
nothing, an allocation in one call), so what stops them is the service's
containment: a child process killed at the wall-clock limit, a data-segment
cap.  Every failure is counted and visible.
"""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from typing import Callable

import httpx
from serving_helpers import (
    FAILING_POLICY,
    SPINNING_POLICY,
    YAML,
    admin_headers,
    archive,
    bundle_service,
    cluster_text,
    serve_process,
    serving,
    write_bundle,
)


def spin_forever(*args, **kwargs):
    """Holds the GIL and checks no budget: only killing its process stops it."""
    while True:
        pass


def allocate_4_gib(*args, **kwargs):
    return bytearray(4 << 30)


def test_a_session_that_never_yields_is_killed_and_healthz_keeps_answering(tmp_path: Path, monkeypatch) -> None:
    """The stuck session holds its request for 4 s (timeout plus grace): a /healthz held with it would
    take seconds, while the probes answer in well under one even on a loaded machine.  (At 0.5 s the
    window left a loaded machine too few probes, and the good sessions beside it too little time.)
    The timeout holds only for the stuck session: a good one on a loaded machine may take longer."""
    service = bundle_service(tmp_path / "one")
    healthz: list[float] = []
    with serving(service) as (url, client):
        good = client.post("/v1/sessions", content=cluster_text(), headers=YAML)
        assert good.status_code == 200, good.text
        service.session_timeout = 3
        real_decide = service.decide
        monkeypatch.setattr(service, "decide", spin_forever)
        done = threading.Event()

        def probe() -> None:
            with httpx.Client(base_url=url, timeout=10) as prober:
                while not done.is_set():
                    started = time.monotonic()
                    assert prober.get("/healthz").status_code == 200
                    healthz.append(time.monotonic() - started)
                    time.sleep(0.05)
        prober = threading.Thread(target=probe)
        prober.start()
        started = time.monotonic()
        stuck = client.post("/v1/sessions", content=cluster_text(), headers=YAML)
        elapsed = time.monotonic() - started
        done.set()
        prober.join()
        assert stuck.status_code == 500 and elapsed < 10
        [diagnostic] = stuck.json()["diagnostics"]
        assert diagnostic["code"] == "R001"
        assert diagnostic["message"] == ("the session ran past --session-timeout (3 s) and was stopped after 4 s")
        assert len(healthz) >= 5 and max(healthz) < 1.0  # answered all along, not after the kill
        monkeypatch.setattr(service, "decide", real_decide)
        service.session_timeout = None
        good = client.post("/v1/sessions", content=cluster_text(), headers=YAML)
        assert good.status_code == 200, good.text
        status = client.get("/v1/status").json()
    assert status["counts"]["failedSessions"] == 1 and status["counts"]["sessions"] == 2
    assert "error[R001]: the session ran past --session-timeout" in status["lastSessionError"]["error"]


def test_a_session_past_its_memory_budget_fails_with_r001(tmp_path: Path, monkeypatch) -> None:
    service = bundle_service(tmp_path / "one")
    service.containment.memory_bytes = 256 << 20
    monkeypatch.setattr(service, "decide", allocate_4_gib)
    with serving(service) as (url, client):
        answer = client.post("/v1/sessions", content=cluster_text(), headers=YAML)
        metrics = client.get("/metrics").text
    assert answer.status_code == 500
    assert answer.json()["diagnostics"][0]["message"] == \
        "the session ran out of its memory budget (256 MiB) and was stopped"
    assert 'fumarole_sessions_total{outcome="error"} 1' in metrics


def test_a_shadow_that_never_ends_neither_changes_the_answer_nor_holds_other_sessions(tmp_path: Path,
                                                                                      monkeypatch) -> None:
    """The second session starts once the first one's shadow is known to spin (its child leaves a
    marker), and must be answered while the first request still waits for that shadow: a fixed sleep
    or a bound in seconds raced with a loaded machine, where the first session alone took longer.
    The shadow spins until the 20 s timeout; the second session must end before it, and on a
    2-core machine under load 4 a plain session has taken more than 6 s."""
    service = bundle_service(tmp_path / "one", session_timeout=20)
    spinning = tmp_path / "shadow-spinning"
    with serving(service) as (url, client):
        plain = client.post("/v1/sessions", content=cluster_text(), headers=YAML).json()
        assert client.put("/v1/bundles/shadow", content=archive(write_bundle(tmp_path / "s", "9", [])),
                          headers=admin_headers()).status_code == 200
        real_decide, shadow = service.decide, service.registry.shadow.loaded

        def shadow_spins(loaded, cluster, clock=None, state=None):
            if loaded is shadow:
                spinning.touch()  # in the shadow's child: the parent sees the file
                spin_forever()
            return real_decide(loaded, cluster, clock, state)
        monkeypatch.setattr(service, "decide", shadow_spins)
        answers: list[httpx.Response] = []
        with_shadow = threading.Thread(
            target=lambda: answers.append(httpx.post(url + "/v1/sessions", content=cluster_text(), headers=YAML,
                                                     timeout=120)))
        with_shadow.start()
        wait_for(spinning.exists, 60)
        service.registry.shadow = None  # the next session has no shadow; it must not wait for the spinning one
        other = client.post("/v1/sessions", content=cluster_text(), headers=YAML)
        assert other.status_code == 200
        assert with_shadow.is_alive() and not answers  # answered while the shadow still spins
        with_shadow.join()
    [answer] = answers
    assert answer.status_code == 200 and answer.json()["decisions"] == plain["decisions"]
    assert "ran past --session-timeout (20 s) and was stopped" in answer.json()["shadow"]["error"]


def wait_for(condition: Callable[[], bool], seconds: float) -> None:
    """Poll ``condition`` until it holds; fail the test after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"not within {seconds} s"
        time.sleep(0.05)


def test_a_bundle_activated_without_smoke_run_that_fails_is_counted_and_shown(tmp_path: Path) -> None:
    service = bundle_service(tmp_path / "one")
    failing = archive(write_bundle(tmp_path / "failing", "2", [], FAILING_POLICY))
    with serving(service) as (url, client):
        assert client.post("/v1/sessions", content=cluster_text(), headers=YAML).status_code == 200
        assert client.put("/v1/bundles/active", content=failing, headers=admin_headers()).status_code == 422
        assert client.put("/v1/bundles/active?smoke=false", content=failing,
                          headers=admin_headers()).status_code == 200
        failed = [client.post("/v1/sessions", content=cluster_text(), headers=YAML) for _ in range(2)]
        status = client.get("/v1/status").json()
        metrics = client.get("/metrics").text
    assert [f.status_code for f in failed] == [500, 500]
    assert status["counts"]["failedSessions"] == 2 and status["counts"]["failedActivations"] == 1
    assert status["lastSessionError"]["bundle"]["revision"] == "2"
    assert "upload!/plugins/site.policy:" in status["lastSessionError"]["error"]
    assert 'fumarole_sessions_total{outcome="error"} 2' in metrics


def test_sigterm_ends_the_service_while_a_session_is_still_running(tmp_path: Path) -> None:
    bundle = write_bundle(tmp_path / "spin", "1", [], SPINNING_POLICY)
    with serve_process(["--bundle", str(bundle), "--session-timeout", "600"]) as (process, url):
        spinning = threading.Thread(target=lambda: _ignore_transport_errors(
            lambda: httpx.post(url + "/v1/sessions", content=cluster_text(), headers=YAML, timeout=60)))
        spinning.start()
        time.sleep(1.5)
        assert httpx.get(url + "/healthz", timeout=5).status_code == 200  # the spinning session blocks nothing
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        assert time.monotonic() - started < 15
        spinning.join(timeout=30)


def _ignore_transport_errors(call) -> None:
    try:
        call()
    except httpx.TransportError:
        pass  # the service went away mid-request: what SIGTERM is for
