"""What ``fumarole serve`` does with hostile requests: 400s with messages, admin refusing web pages, bounded memory."""

from __future__ import annotations

import http.client
import json
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from fumarole.runtime.serve.decision_log import DecisionLog
from fumarole.runtime.serve.extender import Extender
from fumarole.runtime.serve.server import Options
from serving_helpers import TOKEN, archive, cluster_text, make_service, namespaces, running, write_bundle
from test_extender import N1, T2

JSON = {"content-type": "application/json"}


@pytest.fixture
def two_revisions(tmp_path: Path):
    """A service where revision 2 is active and revision 1 can be rolled back to."""
    service = make_service(archive(write_bundle(tmp_path / "one", "1", namespaces())))
    service.registry.activate(archive(write_bundle(tmp_path / "two", "2", namespaces()[:1])), "second")
    return service


# -- admin endpoints and web pages ----------------------------------------------------------------

@pytest.mark.parametrize("headers, code, reason", [
    ({"origin": "http://evil.example", "content-type": "text/plain"}, 403, "Origin 'http://evil.example'"),
    ({"origin": "http://evil.example", "content-type": "application/json"}, 403, "Origin 'http://evil.example'"),
    ({"origin": "null", "content-type": "application/json"}, 403, "Origin 'null'"),
    ({"sec-fetch-site": "cross-site", "content-type": "application/json"}, 403, "Sec-Fetch-Site is 'cross-site'"),
    ({"sec-fetch-site": "same-site", "content-type": "application/json"}, 403, "Sec-Fetch-Site is 'same-site'"),
    ({"content-type": "text/plain"}, 415, "(got text/plain)"),
    ({"content-type": "application/x-www-form-urlencoded; charset=utf-8"}, 415, "(got application/x-www-form"),
    ({"content-type": "multipart/form-data; boundary=x"}, 415, "(got multipart/form-data)"),
    ({}, 415, "(got none)"),
])
def test_without_a_token_admin_endpoints_refuse_what_a_web_page_can_send(two_revisions, headers, code, reason):
    with running(two_revisions, Options(admin_token=None)) as url, httpx.Client(base_url=url, timeout=30) as client:
        refused = client.post("/v1/bundles/rollback", headers=headers)
        put = client.put("/v1/bundles/shadow", content=b"x", headers=headers)
        active = client.get("/v1/status").json()["active"]["revision"]
    assert (refused.status_code, put.status_code, active) == (code, code, "2")
    assert reason in refused.json()["error"]


def test_without_a_token_a_same_origin_request_with_a_json_type_is_obeyed(two_revisions):
    with running(two_revisions, Options(admin_token=None)) as url, httpx.Client(base_url=url, timeout=30) as client:
        origin = f"http://{urlsplit(url).netloc}"
        back = client.post("/v1/bundles/rollback",
                           headers={"content-type": "application/json", "origin": origin,
                                    "sec-fetch-site": "same-origin"})
        assert back.status_code == 200 and back.json()["active"]["revision"] == "1"


def test_a_token_does_not_make_a_cross_site_request_acceptable(two_revisions):
    with running(two_revisions) as url, httpx.Client(base_url=url, timeout=30) as client:
        refused = client.post("/v1/bundles/rollback",
                              headers={"authorization": f"Bearer {TOKEN}", "origin": "https://evil.example"})
        assert refused.status_code == 403
        assert client.post("/v1/bundles/rollback", headers={"authorization": f"Bearer {TOKEN}"}).status_code == 200


# -- bodies ---------------------------------------------------------------------------------------

def test_session_and_extender_bodies_are_refused_with_a_positioned_400(tmp_path: Path):
    service = make_service(archive(write_bundle(tmp_path / "one", "1", namespaces())))
    deep = "[" * 200_000
    with running(service) as url, httpx.Client(base_url=url, timeout=60) as client:
        duplicate = client.post("/v1/sessions", headers=JSON,
                                content='{"apiVersion": "v1", "kind": "Node",\n "kind": "Pod"}')
        deep_session = client.post("/v1/sessions", headers=JSON, content=deep)
        deep_extender = client.post("/v1/extender/predicate", headers=JSON, content=deep)
        duplicate_extender = client.post("/v1/extender/predicate", headers=JSON,
                                         content='{"task": {}, "node": {},\n  "task": {}}')
        not_utf8 = client.post("/v1/extender/predicate", headers=JSON, content=b'{"task": "\xff"}')
        status = client.get("/v1/status").json()
    assert duplicate.status_code == 400
    [d] = duplicate.json()["diagnostics"]
    assert (d["code"], d["line"], d["col"]) == ("K001", 2, 2)
    assert d["message"] == "malformed JSON: duplicate key 'kind' (first at line 1, column 22)"
    assert deep_session.status_code == 400
    assert "nested deeper than 100 levels" in deep_session.json()["diagnostics"][0]["message"]
    assert deep_extender.status_code == 400 and "nested deeper than 100 levels" in deep_extender.json()["error"]
    assert duplicate_extender.status_code == 400
    assert duplicate_extender.json()["error"] == ("request:2:3: error[K001]: malformed JSON: duplicate key 'task' "
                                                  "(first at line 1, column 2)")
    assert not_utf8.status_code == 400 and not_utf8.json()["error"] == "malformed JSON: not UTF-8 text (byte 10)"
    # a malformed body is the sender's problem, not a failed session
    assert status["counts"]["rejectedSessions"] == 2 and status["counts"]["failedSessions"] == 0


def test_a_million_empty_yaml_documents_are_refused_at_once(tmp_path: Path):
    service = make_service(archive(write_bundle(tmp_path / "one", "1", namespaces())))
    body = b"--- {}\n" * 1_000_000
    with running(service) as url, httpx.Client(base_url=url, timeout=60) as client:
        started = time.monotonic()
        refused = client.post("/v1/sessions", content=body)
        elapsed = time.monotonic() - started
    assert refused.status_code == 400 and elapsed < 10
    [d] = refused.json()["diagnostics"]
    assert (d["code"], d["line"], d["col"]) == ("K001", 100_001, 1)
    assert d["message"] == "more than 100,000 YAML documents in one body (fumarole's limit per session)"


def test_an_answer_lists_at_most_100_problems(tmp_path: Path):
    service = make_service(archive(write_bundle(tmp_path / "one", "1", namespaces())))
    with running(service) as url, httpx.Client(base_url=url, timeout=60) as client:
        refused = client.post("/v1/sessions", content=b"--- {}\n" * 500)
    diagnostics = refused.json()["diagnostics"]
    assert refused.status_code == 400 and len(diagnostics) == 101
    assert diagnostics[-1]["message"] == "... and 400 more problems not shown (K002 \u00d7400)"


def test_an_extender_node_whose_name_disagrees_with_its_node_is_a_400(tmp_path: Path):
    service = make_service(archive(write_bundle(tmp_path / "one", "1", namespaces())))
    node = {**N1, "Name": "elsewhere"}
    with running(service) as url, httpx.Client(base_url=url, timeout=60) as client:
        answer = client.post("/v1/extender/predicate", json={"task": T2, "node": node})
    assert answer.status_code == 400
    assert answer.json()["error"] == "node.Name 'elsewhere' is not the name of node.Node ('node-1')"


def test_an_internal_error_answers_500_and_keeps_the_connection(tmp_path: Path, monkeypatch):
    service = make_service(archive(write_bundle(tmp_path / "one", "1", namespaces())))

    def broken(self, verb, body):
        raise KeyError("a bug")
    monkeypatch.setattr(Extender, "handle", broken)
    with running(service) as url:
        netloc = urlsplit(url).netloc
        connection = http.client.HTTPConnection(netloc, timeout=30)
        connection.request("POST", "/v1/extender/predicate", body=json.dumps({"task": T2, "node": N1}), headers=JSON)
        first = connection.getresponse()
        assert first.status == 500 and json.loads(first.read())["error"] == "internal error: KeyError: 'a bug'"
        used = connection.sock
        connection.request("GET", "/healthz")
        second = connection.getresponse()
        assert second.status == 200 and connection.sock is used  # the same keep-alive connection
        second.read()
        connection.close()


# -- retention ------------------------------------------------------------------------------------

def test_the_decision_log_keeps_large_entries_without_their_decisions_and_bounds_its_bytes():
    log = DecisionLog(capacity=1000, max_entry_bytes=2000, max_total_bytes=10_000)
    big = log.append({"time": 1.0, "bundle": {"name": "b"}, "decisions": {"binds": {"p" * 5000: "n"}},
                      "durationMs": 2.0})
    [kept] = log.since(0)["entries"]
    assert kept["id"] == big and "decisions" not in kept and kept["bundle"] == {"name": "b"}
    assert kept["omitted"]["bytes"] > 5000
    for i in range(100):
        log.append({"time": 1.0, "decisions": {"binds": {f"p{i}": "n" * 900}}})
    held = log.since(0, limit=1000)["entries"]
    assert 5 <= len(held) <= 11 and held[-1]["decisions"] == {"binds": {"p99": "n" * 900}}
    assert sum(len(json.dumps(e, sort_keys=True)) for e in held) <= 10_000
    assert log.bounds()["oldest"] == held[0]["id"]


def test_sessions_over_huge_names_do_not_grow_the_log(tmp_path: Path):
    service = make_service(archive(write_bundle(tmp_path / "one", "1", namespaces())))
    huge = cluster_text().replace("name: ", "name: " + "x" * 2_000_000, 1)
    with running(service) as url, httpx.Client(base_url=url, timeout=60) as client:
        answer = client.post("/v1/sessions", content=huge)
        assert answer.status_code == 200, answer.text
        entry = client.get("/v1/decisions?since=0").json()["entries"][-1]
    assert entry["id"] == answer.json()["id"] and "omitted" in entry and "decisions" not in entry


def test_an_unreadable_policy_in_an_upload_names_the_archive_not_the_compile_folder(tmp_path: Path):
    state = tmp_path / "state"
    service = make_service(archive(write_bundle(tmp_path / "one", "1", namespaces())), state=state)
    broken = write_bundle(tmp_path / "two", "2", namespaces())
    (broken / "plugins" / "site.policy").write_bytes(b"plugin namespace_gate\n\xff\n")
    with running(service) as url, httpx.Client(base_url=url, timeout=60) as client:
        refused = client.put("/v1/bundles/active", content=archive(broken),
                             headers={"authorization": f"Bearer {TOKEN}"})
    assert refused.status_code == 422
    [d] = refused.json()["diagnostics"]
    assert (d["code"], d["file"], d["line"], d["col"]) == ("F001", "upload!/plugins/site.policy", 2, 1)
    assert d["message"].startswith("cannot read upload!/plugins/site.policy: not UTF-8")
    assert str(state) not in json.dumps(refused.json())
