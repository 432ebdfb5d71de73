"""A served bundle whose smoke run never ends is bounded like any session and never wedges the swap lock."""

from __future__ import annotations

import json
import time
from pathlib import Path

from serving_helpers import (
    SPINNING_POLICY,
    YAML,
    admin_headers,
    archive,
    bundle_service,
    cluster_text,
    namespaces,
    serving,
    write_bundle,
)


def test_a_smoke_run_that_never_ends_is_refused_and_releases_the_lock(tmp_path: Path) -> None:
    """The good session and upload around it run without the short timeout: on a loaded machine a
    good session can take longer than half a second, which is not what this test is about.  The
    smoke run's timeout leaves the session's opening (the standard plugins' open hooks, on a busy
    machine) room to finish, so that the deadline is met in the spinning rule it is about."""
    ns = namespaces()
    service = bundle_service(tmp_path / "one", ns)
    spinning = archive(write_bundle(tmp_path / "spin", "2", [], SPINNING_POLICY))
    with serving(service) as (_, client):
        assert client.post("/v1/sessions", content=cluster_text(), headers=YAML).status_code == 200
        service.session_timeout = 2.0  # as `serve --session-timeout 2`, for the spinning upload's smoke run
        started = time.monotonic()
        refused = client.put("/v1/bundles/active", content=spinning, headers=admin_headers())
        assert refused.status_code == 422 and time.monotonic() - started < 30
        service.session_timeout = None
        diagnostic = refused.json()["diagnostics"][0]
        assert diagnostic["code"] == "R001" and diagnostic["file"] == "upload!/plugins/site.policy"
        # one of the two loops (which one notices first depends on the machine's speed), and whichever
        # budget that machine meets first: the deadline, or the hook's steps
        assert diagnostic["line"] in (7, 8)
        assert "ran past its deadline (2 s, --session-timeout)" in diagnostic["message"] \
            or "the step budget of one invocation of hook 'predicate' ran out" in diagnostic["message"]
        # the lock is free again: the next upload and a rollback are answered, not 409
        accepted = client.put("/v1/bundles/active", content=archive(write_bundle(tmp_path / "two", "3", ns[:1])),
                              headers=admin_headers())
        assert accepted.status_code == 200, accepted.text
        assert client.post("/v1/bundles/rollback", headers=admin_headers()).status_code == 200
        assert client.get("/v1/status").json()["active"]["revision"] == "1"


def test_an_extender_verb_ends_at_the_session_timeout(tmp_path: Path) -> None:
    """Extender verbs built their session without any budget: a predicate loop answered after 13.9 s
    on `serve --session-timeout 1`.  Each verb now has the deadline, and the next verb a fresh one."""
    example = json.loads(Path(__file__).with_name("volcano_extender_example.json").read_text())
    service = bundle_service(tmp_path / "spin", [], SPINNING_POLICY, session_timeout=1.0)
    body = {"task": example["T2"], "node": example["N1"]}
    with serving(service) as (_, client):
        for _ in range(2):
            started = time.monotonic()
            answer = client.post("/v1/extender/predicate", json=body)
            assert time.monotonic() - started < 8
            assert answer.status_code == 500
            error = answer.json()["error"]  # whichever budget a machine of its speed meets first
            assert "ran past its deadline (1 s, --session-timeout)" in error \
                or "the step budget of one invocation of hook 'predicate' ran out" in error, error
        assert client.get("/healthz").status_code == 200
