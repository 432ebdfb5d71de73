"""fumarole serve's extender verbs run in killable children: a Volcano session in a persistent worker.

A verb whose work runs away (here: answering is made to hang or to allocate
without end, which no policy can do past its budget any more, so the tests
stand in for whatever might) is stopped at the hard limit and answered 500,
while /healthz answers; the session goes on with the next verb in a fresh
worker; the service's memory budget is shared by its children.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import httpx
import pytest
from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.serve import extender as extender_module
from fumarole.runtime.serve.contained import MiB, Containment
from serving_helpers import make_service, running
from test_extender import J1, N1, PREFIX, Q1, T1, T2, site_bundle


def open_request() -> dict:
    return {"Jobs": {J1["UID"]: J1}, "Nodes": {"node-1": N1}, "Queues": {"q1": Q1}, "NamespaceInfo": {},
            "RevocableNodes": {}, "NodeList": None}


@pytest.fixture
def runaway(monkeypatch):
    """predicate hangs (sleeps) or allocates 4 GiB for the tasks named, answers as before for others."""
    modes: dict[str, str] = {}
    original = extender_module._VERBS["predicate"]

    def predicate(self, body):
        mode = modes.get(body["task"]["Name"])
        if mode == "hang":
            time.sleep(120)
        if mode == "memory":
            bytearray(4 << 30)
        return original(self, body)
    monkeypatch.setitem(extender_module._VERBS, "predicate", predicate)
    return modes


@pytest.fixture
def service(tmp_path: Path):
    service = make_service(site_bundle(tmp_path / "b", reserved_nodes=["node-1"]))
    service.session_timeout = 0.5
    service.containment.memory_bytes = 256 * MiB
    yield service
    service.stop()


@pytest.mark.parametrize("mode, reason", [("hang", "ran past --session-timeout"),
                                          ("memory", "ran out of its memory budget")])
def test_a_runaway_verb_is_stopped_and_the_session_goes_on(service, runaway, mode, reason) -> None:
    runaway["p-1"] = mode
    with running(service) as url, httpx.Client(base_url=url, timeout=60) as client:
        assert client.post(PREFIX + "/onSessionOpen", json=open_request()).status_code == 200
        answers: dict[str, httpx.Response] = {}
        asked = threading.Thread(target=lambda: answers.setdefault(
            "runaway", client.post(PREFIX + "/predicate", json={"task": T1, "node": N1})))
        start = time.monotonic()
        asked.start()
        with httpx.Client(base_url=url, timeout=10) as other:  # the service answers meanwhile
            assert other.get("/healthz").status_code == 200
        asked.join(30)
        took = time.monotonic() - start
        runaway_answer = answers["runaway"]
        assert runaway_answer.status_code == 500 and reason in runaway_answer.json()["error"], runaway_answer.text
        assert took < 10
        # the same Volcano session, from a fresh worker: node-1 is still reserved by its bundle
        again = client.post(PREFIX + "/predicate", json={"task": T2, "node": N1})
        assert again.status_code == 200 and again.json() == {"status": "node is reserved", "code": 3}
        assert client.post(PREFIX + "/onSessionClose", json={}).status_code == 200
    assert not service.containment._children  # the worker went with the session


def test_a_verb_without_an_open_session_runs_in_its_own_child(service, runaway) -> None:
    runaway["p-1"] = "hang"
    with running(service) as url, httpx.Client(base_url=url, timeout=60) as client:
        answer = client.post(PREFIX + "/predicate", json={"task": T1, "node": N1})
        assert answer.status_code == 500 and "ran past --session-timeout" in answer.json()["error"]
        assert client.post(PREFIX + "/predicate", json={"task": T2, "node": N1}).json()["code"] == 3


def test_shutdown_kills_the_open_session_worker(service) -> None:
    with running(service) as url, httpx.Client(base_url=url, timeout=60) as client:
        assert client.post(PREFIX + "/onSessionOpen", json=open_request()).status_code == 200
        [worker] = service.containment._children
    service.stop()
    assert _ended(worker)


def _ended(pid: int) -> bool:
    """The child has ended (reaped here) within a few seconds."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return True
        time.sleep(0.05)
    return False


def test_the_process_wide_memory_budget_is_shared_by_the_children() -> None:
    containment = Containment(None, memory_bytes=64 * MiB, total_bytes=100 * MiB)
    holder = threading.Thread(target=lambda: containment.run(lambda: time.sleep(2), "first session"))
    holder.start()
    try:
        deadline = time.monotonic() + 10
        while not containment._children and time.monotonic() < deadline:
            time.sleep(0.01)
        with pytest.raises(FumaroleError) as refused:
            containment.run(lambda: 1, "second session")
        assert "memory budget (100 MiB, --memory-budget) is spoken for by 1 running sessions of 64 MiB" in \
            refused.value.diagnostics[0].message
    finally:
        holder.join(30)
    assert containment.run(lambda: 2, "third session") == 2
