"""`fumarole serve` over real HTTP on loopback: sessions, swaps, auth, persistence, failures."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import httpx
import pytest
import yaml
from fumarole.policy_lang.diagnostics import Diagnostic, FumaroleError
from fumarole.runtime.cli.main import main
from fumarole.runtime.serve import state as state_module
from fumarole.runtime.serve.server import Options, check_listen
from fumarole.runtime.serve.watch import Watcher
from serving_helpers import (
    FAILING_POLICY,
    GATE_POLICY,
    TOKEN,
    admin_headers,
    archive,
    cluster_text,
    expected_decisions,
    make_service,
    namespaces,
    new_key,
    running,
    serve_process,
    write_bundle,
)

YAML = {"content-type": "application/yaml"}


@pytest.fixture
def bundles(tmp_path: Path) -> dict[str, Path]:
    ns = namespaces()
    return {"one": write_bundle(tmp_path / "one", "1", ns),
            "two": write_bundle(tmp_path / "two", "2", ns[:1]),
            "broken": write_bundle(tmp_path / "broken", "3", [], GATE_POLICY.replace("allowed\n", "alowed\n")),
            "failing": write_bundle(tmp_path / "failing", "4", [], FAILING_POLICY)}


def session(client: httpx.Client, **params: str) -> dict:
    response = client.post("/v1/sessions", content=cluster_text(), headers=YAML, params=params)
    assert response.status_code == 200, response.text
    return response.json()


# -- sessions ------------------------------------------------------------------------------

def test_a_session_answers_like_run_and_is_stamped(bundles, tmp_path, capsys) -> None:
    service = make_service(archive(bundles["one"]))
    digest = service.registry.active.digest
    with running(service) as url, httpx.Client(base_url=url) as client:
        answer = session(client)
        as_json = client.post("/v1/sessions", json=list(yaml.safe_load_all(cluster_text())))
    assert answer["bundle"] == {"name": "site", "revision": "1", "digest": digest}
    (tmp_path / "c.yaml").write_text(cluster_text())
    assert main(["run", str(tmp_path / "c.yaml"), "--bundle", str(bundles["one"]), "--format", "json"]) == 0
    assert answer["decisions"] == json.loads(capsys.readouterr().out) == expected_decisions(bundles["one"])
    assert as_json.status_code == 200 and as_json.json()["decisions"] == answer["decisions"]


@pytest.mark.parametrize("body,content_type,code", [
    (b'{"kind": "Pod", ', "application/json", "K001"),
    (b"items: [unclosed", "application/yaml", "K001"),
    (b"\xff\xfe", "application/yaml", "K001"),
    (b'{"kind": "Gadget", "metadata": {"name": "x"}}', "application/json", "K002"),
    (b'[5]', "application/json", "K005"),
    (b'[{"kind": "Pod", "metadata": {"name": "p", "annotations": 5}}]', "application/json", "K007"),
])
def test_bad_cluster_bodies_are_400_with_diagnostics(bundles, body, content_type, code) -> None:
    service = make_service(archive(bundles["one"]))
    with running(service) as url:
        response = httpx.post(url + "/v1/sessions", content=body, headers={"content-type": content_type})
        assert response.status_code == 400, response.text
        assert response.json()["diagnostics"][0]["code"] == code
        assert httpx.get(url + "/healthz").status_code == 200


def test_a_policy_failing_in_a_session_is_a_500_and_nothing_else(bundles) -> None:
    service = make_service(archive(bundles["one"]))
    with running(service) as url, httpx.Client(base_url=url) as client:
        session(client)
        refused = client.put("/v1/bundles/active", content=archive(bundles["failing"]), headers=admin_headers())
        assert refused.status_code == 422  # the smoke run on the last cluster caught it
        forced = client.put("/v1/bundles/active", content=archive(bundles["failing"]), headers=admin_headers(),
                            params={"smoke": "false"})
        assert forced.status_code == 200
        failed = client.post("/v1/sessions", content=cluster_text(), headers=YAML)
        assert failed.status_code == 500
        diagnostic = failed.json()["diagnostics"][0]
        assert diagnostic["code"] == "R001" and diagnostic["file"] == "upload!/plugins/site.policy"
        assert diagnostic["line"] == 7
        assert client.post("/v1/bundles/rollback", headers=admin_headers()).status_code == 200
        session(client)
        assert client.get("/v1/status").json()["counts"]["failedSessions"] == 1


def test_limits_routes_and_methods(bundles) -> None:
    service = make_service(archive(bundles["one"]))
    with running(service, Options(admin_token=TOKEN, max_session_bytes=1000, max_bundle_bytes=1000)) as url:
        big = httpx.post(url + "/v1/sessions", content=b"x" * 5000, headers=YAML)
        assert big.status_code == 413 and "error" in big.json()

        def chunks():
            yield b"x" * 600
            yield b"x" * 600
        assert httpx.post(url + "/v1/sessions", content=chunks(), headers=YAML).status_code == 413
        assert httpx.put(url + "/v1/bundles/active", content=b"x" * 5000, headers=admin_headers()).status_code == 413
        missing = httpx.get(url + "/v1/nothing")
        assert missing.status_code == 404 and missing.json() == {"error": "Not Found"}
        wrong = httpx.get(url + "/v1/sessions")
        assert wrong.status_code == 405 and wrong.headers["allow"] == "POST" and "error" in wrong.json()
        assert httpx.delete(url + "/v1/status").status_code == 405
        assert httpx.get(url + "/v1/decisions", params={"since": "x"}).status_code == 400
        assert httpx.get(url + "/healthz").json()["status"] == "ok"


# -- activation, auth, rollback, shadow -----------------------------------------------------------

def test_activate_rollback_and_failures_keep_the_old_bundle(bundles) -> None:
    service = make_service(archive(bundles["one"]))
    with running(service) as url, httpx.Client(base_url=url) as client:
        first = session(client)["bundle"]["digest"]
        put = client.put("/v1/bundles/active", content=archive(bundles["two"]), headers=admin_headers())
        assert put.status_code == 200 and put.json()["outcome"] == "activated"
        second = put.json()["active"]["digest"]
        assert session(client)["bundle"]["revision"] == "2"
        again = client.put("/v1/bundles/active", content=archive(bundles["two"]), headers=admin_headers())
        assert again.json()["outcome"] == "unchanged"
        for name, code in (("broken", "E"), ("failing", "R001")):
            bad = client.put("/v1/bundles/active", content=archive(bundles[name]), headers=admin_headers())
            assert bad.status_code == 422 and bad.json()["diagnostics"][0]["code"].startswith(code)
            assert bad.json()["diagnostics"][0]["file"] == "upload!/plugins/site.policy"
            assert session(client)["bundle"]["digest"] == second
        status = client.get("/v1/status").json()
        assert status["lastActivation"]["outcome"] == "rejected" and status["lastActivation"]["diagnostics"]
        assert status["active"]["digest"] == second and status["previous"][0]["digest"] == first
        back = client.post("/v1/bundles/rollback", headers=admin_headers())
        assert back.status_code == 200 and back.json()["active"]["digest"] == first
        assert session(client)["bundle"]["digest"] == first
        none_left = client.post("/v1/bundles/rollback", headers=admin_headers())
        assert none_left.status_code == 409 and none_left.json()["diagnostics"] == [{
            "code": "S010", "severity": "error", "message": "no previous revision to roll back to",
            "file": "rollback", "line": None, "col": None}]
        counts = client.get("/v1/status").json()["counts"]
        assert counts == {"sessions": 5, "failedSessions": 0, "rejectedSessions": 0, "swaps": 3, "rollbacks": 1, "failedActivations": 2,
                          "shadowFailures": 0}
        metrics = client.get("/metrics")
    text = metrics.text
    assert metrics.headers["content-type"].startswith("text/plain; version=0.0.4")
    assert 'fumarole_sessions_total{outcome="ok"} 5' in text
    assert 'fumarole_activation_failures_total{origin="upload"} 2' in text
    assert 'fumarole_swaps_total{kind="rollback"} 1' in text
    assert 'fumarole_session_duration_seconds_bucket{le="+Inf"} 5' in text and "fumarole_session_duration_seconds_sum" in text
    assert f'fumarole_active_bundle_info{{digest="{first}",name="site",revision="1"}} 1' in text
    for line in text.splitlines():
        assert line.startswith("# HELP ") or line.startswith("# TYPE ") or len(line.rsplit(" ", 1)) == 2


def test_admin_needs_the_bearer_token(bundles) -> None:
    service = make_service(archive(bundles["one"]))
    data = archive(bundles["two"])
    with running(service) as url:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN},
                        {"Authorization": f"Basic {TOKEN}"}):
            response = httpx.put(url + "/v1/bundles/active", content=data, headers=headers)
            assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
        assert httpx.post(url + "/v1/bundles/rollback").status_code == 401
        assert httpx.put(url + "/v1/bundles/shadow", content=data).status_code == 401
        assert service.registry.active.bundle.revision == "1"
    with running(service, Options(admin_enabled=False)) as url:
        assert httpx.put(url + "/v1/bundles/active", content=data).status_code == 403


def test_no_token_and_not_loopback_is_refused(tmp_path, capsys) -> None:
    assert check_listen("127.0.0.1", Options()) is None and check_listen("::1", Options()) is None
    assert check_listen("localhost", Options()) is None
    assert "refusing" in check_listen("0.0.0.0", Options())
    assert check_listen("0.0.0.0", Options(admin_token=TOKEN)) is None
    assert check_listen("0.0.0.0", Options(admin_enabled=False)) is None
    bundle = write_bundle(tmp_path / "b", "1", [])
    assert main(["serve", "--bundle", str(bundle), "--listen", "0.0.0.0:0"]) == 2
    assert "refusing to listen" in capsys.readouterr().err


def test_concurrent_uploads_one_wins_and_sessions_never_wait(bundles) -> None:
    service = make_service(archive(bundles["one"]))
    smoke = service.smoke
    verifying, released = threading.Event(), threading.Event()

    def slow_smoke(loaded):
        # held until the test has asked its session and its second upload: a session that waited
        # for the upload would wait the whole minute
        verifying.set()
        released.wait(timeout=60)
        smoke(loaded)
    service.registry.smoke = slow_smoke
    answers: list[int] = []
    with running(service) as url, httpx.Client(base_url=url) as client:
        def upload() -> None:
            answers.append(httpx.put(url + "/v1/bundles/active", content=archive(bundles["two"]),
                                     headers=admin_headers(), timeout=10).status_code)
        first = threading.Thread(target=upload)
        first.start()
        assert verifying.wait(timeout=60)  # the upload is being verified (however busy the machine)
        started = time.perf_counter()
        during = session(client)  # while the upload is being verified: old bundle, no waiting
        assert time.perf_counter() - started < 30 and during["bundle"]["revision"] == "1"
        second = client.put("/v1/bundles/active", content=archive(bundles["one"]), headers=admin_headers())
        assert second.status_code == 409 and "in progress" in second.json()["error"]
        released.set()
        first.join()
        assert answers == [200]
        assert session(client)["bundle"]["revision"] == "2"


def test_shadow_diffs_go_to_the_decision_log(bundles) -> None:
    service = make_service(archive(bundles["one"]))
    with running(service) as url, httpx.Client(base_url=url) as client:
        assert client.put("/v1/bundles/shadow", content=archive(bundles["broken"]),
                          headers=admin_headers()).status_code == 422
        put = client.put("/v1/bundles/shadow", content=archive(bundles["two"]), headers=admin_headers())
        assert put.status_code == 200 and put.json()["shadow"]["revision"] == "2"
        answer = session(client)
        assert answer["bundle"]["revision"] == "1" and answer["decisions"] == expected_decisions(bundles["one"])
        log = client.get("/v1/decisions", params={"since": 0}).json()
        entry = log["entries"][-1]
        assert entry["id"] == answer["id"] and entry["bundle"]["revision"] == "1"
        assert entry["shadow"]["bundle"]["revision"] == "2"
        want = expected_decisions(bundles["two"])
        for kind, diff in entry["shadow"]["differences"].items():
            assert diff  # only what differs is listed
        if want != answer["decisions"]:
            assert entry["shadow"]["differences"]
        assert client.get("/v1/status").json()["shadow"]["revision"] == "2"
        assert client.delete("/v1/bundles/shadow", headers=admin_headers()).json() == {"shadow": None}
        session(client)
        later = client.get("/v1/decisions", params={"since": answer["id"]}).json()
        assert [e["id"] for e in later["entries"]] == [answer["id"] + 1] and "shadow" not in later["entries"][0]
        assert later["next"] == answer["id"] + 1
        assert client.get("/v1/decisions", params={"since": 99}).json()["next"] == answer["id"] + 1


# -- persistence ----------------------------------------------------------------------------

def test_state_dir_keeps_last_known_good_across_restarts(bundles, tmp_path) -> None:
    state = tmp_path / "state"
    service = make_service(archive(bundles["one"]), state=state)
    with running(service) as url:
        assert httpx.put(url + "/v1/bundles/active", content=archive(bundles["two"]),
                         headers=admin_headers()).status_code == 200
        session(httpx.Client(base_url=url))
    lkg = (state / "last-known-good.tar.gz").read_bytes()
    assert lkg == archive(bundles["two"])
    assert json.loads((state / "decisions.jsonl").read_text().splitlines()[-1])["bundle"]["revision"] == "2"

    # a crash between writing the temporary file and the rename leaves a stray file behind
    (state / ".tmp-last-known-good.tar.gz.abc").write_bytes(b"half a bundle")
    restarted = make_service(None, state=state)
    restarted.start(bundle=bundles["one"], watcher=Watcher(restarted.registry, bundles["broken"]))
    assert restarted.registry.active.bundle.revision == "2"  # resumed, although the watched bundle is broken
    assert not list(state.glob(".tmp-*"))
    assert restarted.registry.last_attempt["outcome"] == "rejected"


def test_crash_before_rename_keeps_the_old_bundle(bundles, tmp_path, monkeypatch) -> None:
    state = tmp_path / "state"
    service = make_service(archive(bundles["one"]), state=state)
    before = (state / "last-known-good.tar.gz").read_bytes()

    def crash(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(state_module.os, "replace", crash)
    with running(service) as url:
        response = httpx.put(url + "/v1/bundles/active", content=archive(bundles["two"]), headers=admin_headers())
        assert response.status_code == 422 and response.json()["diagnostics"] == [{
            "code": "S005", "severity": "error", "message": "cannot persist the bundle: No space left on device",
            "file": str(state / "last-known-good.tar.gz"), "line": None, "col": None,
            "hint": "the previous bundle stays active"}]
        assert session(httpx.Client(base_url=url))["bundle"]["revision"] == "1"
    assert (state / "last-known-good.tar.gz").read_bytes() == before
    assert not list(state.glob(".tmp-*"))


def test_a_corrupt_last_known_good_falls_back_to_the_bundle_option(bundles, tmp_path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "last-known-good.tar.gz").write_bytes(archive(bundles["one"])[:100])
    service = make_service(None, state=state)
    service.start(bundle=bundles["two"])
    assert service.registry.active.bundle.revision == "2"
    assert (state / "last-known-good.tar.gz").read_bytes() == archive(bundles["two"])


def test_watch_activates_changes_through_the_same_path(bundles, tmp_path) -> None:
    watched = write_bundle(tmp_path / "watched", "10", namespaces())
    service = make_service(archive(bundles["one"]))
    watcher = Watcher(service.registry, watched, interval=0.05)
    watcher.poll()
    assert service.registry.active.bundle.revision == "10"
    watcher.start()
    try:
        (watched / "plugins" / "site.policy").write_text(GATE_POLICY.replace("allowed\n", "alowed\n"))
        deadline = time.time() + 5
        while service.registry.last_attempt["outcome"] != "rejected" and time.time() < deadline:
            time.sleep(0.02)
        time.sleep(0.2)
        assert service.registry.active.bundle.revision == "10"
        assert service.metrics.activation_failures.value(origin="watch") == 1  # counted once, not per poll
        write_bundle(watched, "11", namespaces()[:1])
        while service.registry.active.bundle.revision != "11" and time.time() < deadline:
            time.sleep(0.02)
        assert service.registry.active.bundle.revision == "11"
    finally:
        watcher.stop()


def test_signed_bundles_only_when_a_key_is_trusted(bundles) -> None:
    key, other = new_key(), new_key()
    service = make_service(archive(bundles["one"], key), trusted=[key])
    with running(service) as url:
        for data in (archive(bundles["two"]), archive(bundles["two"], other)):
            response = httpx.put(url + "/v1/bundles/active", content=data, headers=admin_headers())
            assert response.status_code == 422 and response.json()["diagnostics"][0]["code"] in ("A031", "A033")
        good = httpx.put(url + "/v1/bundles/active", content=archive(bundles["two"], key), headers=admin_headers())
        assert good.status_code == 200 and good.json()["active"]["signedBy"]


# -- the command ------------------------------------------------------------------------------

def test_fumarole_serve_end_to_end(bundles, tmp_path) -> None:
    (tmp_path / "token").write_text(TOKEN + "\n")
    args = ["--bundle", str(bundles["one"]), "--state-dir", str(tmp_path / "state"),
            "--admin-token-file", str(tmp_path / "token")]
    with serve_process(args) as (process, url):
        assert httpx.post(url + "/v1/sessions", content=cluster_text(), headers=YAML).status_code == 200
        put = httpx.put(url + "/v1/bundles/active", content=archive(bundles["two"]), headers=admin_headers())
        assert put.status_code == 200
        assert httpx.get(url + "/v1/status").json()["active"]["revision"] == "2"
        process.terminate()
        process.wait(timeout=10)
    assert (tmp_path / "state" / "last-known-good.tar.gz").read_bytes() == archive(bundles["two"])


def test_state_folder_problems_are_diagnostics(tmp_path) -> None:
    from fumarole.runtime.serve.state import StateDir

    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(FumaroleError) as unusable:
        StateDir.open(blocker / "state")
    assert unusable.value.diagnostics == [Diagnostic(
        "S004", f"cannot use state folder {blocker / 'state'}: Not a directory", str(blocker / "state"))]
    state = StateDir.open(tmp_path / "state")
    state.last_known_good_path.mkdir()  # a folder where the archive should be: unreadable as a file
    with pytest.raises(FumaroleError) as unreadable:
        state.last_known_good()
    assert unreadable.value.diagnostics == [Diagnostic(
        "S003", "cannot read the last-known-good bundle: Is a directory", str(state.last_known_good_path))]


def test_nothing_valid_to_serve_is_s020(tmp_path) -> None:
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(b"not an archive")
    service = make_service(None)
    with pytest.raises(FumaroleError) as info:
        service.start(broken)
    assert info.value.diagnostics == [Diagnostic(
        "S020", f"no valid bundle to serve (last attempt: {broken})", "fumarole serve",
        hint="give --bundle, --watch, or a --state-dir holding a last-known-good")]
