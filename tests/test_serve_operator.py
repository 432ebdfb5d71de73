"""What serve tells its operator: one structured log line per activation, refusal and rollback, times
in RFC 3339 everywhere, and no made-up positions on diagnostics about a whole request."""

from __future__ import annotations

import logging
import re

import httpx
from serving_helpers import admin_headers, archive, cluster_text, make_service, running
from test_server import YAML, bundles, session  # noqa: F401 - bundles is a fixture

RFC3339_MS = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")


def _lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "fumarole" and r.getMessage().startswith("event=")]


def test_every_activation_refusal_and_rollback_is_one_log_line(bundles, caplog):  # noqa: F811
    caplog.set_level(logging.INFO, logger="fumarole")
    service = make_service(archive(bundles["one"]))
    with running(service) as url, httpx.Client(base_url=url) as client:
        caplog.clear()
        client.put("/v1/bundles/active", content=archive(bundles["two"]), headers=admin_headers())
        client.put("/v1/bundles/active", content=archive(bundles["broken"]), headers=admin_headers())
        client.post("/v1/bundles/rollback", headers=admin_headers())
        client.post("/v1/bundles/rollback", headers=admin_headers())
    lines = _lines(caplog)
    assert [re.search(r"outcome=(\"[^\"]*\"|\S+)", line).group(1) for line in lines] == [
        "activated", "rejected", '"rolled back"', '"rollback refused"']
    activated, rejected, rolled_back, refused = lines
    digest = service.registry.active.digest
    assert "origin=upload" in activated and "source=upload" in activated and "digest=" in activated
    assert rejected.count("diagnostics=") == 1 and 'first="upload!/plugins/site.policy:' in rejected
    assert f"digest={digest}" in rolled_back and "origin=rollback" in rolled_back
    assert 'first="rollback: error[S010]: no previous revision to roll back to"' in refused
    assert all(RFC3339_MS.search(line.split(" at=", 1)[1]) for line in lines)


def test_times_in_answers_are_rfc3339(bundles):  # noqa: F811
    service = make_service(archive(bundles["one"]))
    with running(service) as url, httpx.Client(base_url=url) as client:
        answer = session(client)
        assert RFC3339_MS.fullmatch(answer["time"]), answer["time"]
        status = client.get("/v1/status").json()
        assert RFC3339_MS.fullmatch(status["active"]["activatedAt"])


def test_a_diagnostic_about_the_whole_request_has_no_position(bundles):  # noqa: F811
    service = make_service(archive(bundles["one"]))
    with running(service) as url, httpx.Client(base_url=url) as client:
        bad = client.post("/v1/sessions", content=cluster_text(), headers=YAML, params={"now": "yesterday"})
        assert bad.status_code == 400
        diagnostic = bad.json()["diagnostics"][0]
        assert diagnostic["code"] == "K001" and diagnostic["line"] is None and diagnostic["col"] is None
        none_left = client.post("/v1/bundles/rollback", headers=admin_headers())
        assert none_left.json()["diagnostics"][0]["line"] is None


def test_a_bundle_whose_arguments_volcano_would_only_log_is_activated_and_its_warnings_logged(bundles, tmp_path,
                                                                                              caplog):  # noqa: F811
    """As Volcano's hot reload would load it: an ignored key and a value kept at its default are warnings."""
    from serving_helpers import write_bundle

    tiers = [{"plugins": [{"name": "priority"}, {"name": "gang"}]},
             {"plugins": [{"name": "predicates"},
                          {"name": "nodeorder", "arguments": {"leastrequested.weight": "heavy", "leastrequested": 2}},
                          {"name": "namespace_gate", "arguments": {"allowed": []}}]}]
    lenient = write_bundle(tmp_path / "lenient", "5", [], tiers=tiers)
    caplog.set_level(logging.INFO, logger="fumarole")
    service = make_service(archive(bundles["one"]))
    with running(service) as url, httpx.Client(base_url=url) as client:
        caplog.clear()
        answer = client.put("/v1/bundles/active", content=archive(lenient), headers=admin_headers())
        assert answer.status_code == 200, answer.text
        assert session(client)["bundle"]["revision"] == "5"
    logged = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("warning[C012]: argument 'leastrequested.weight' of plugin 'nodeorder' must be an int, not 'heavy'; "
               "the default 1 is used" in line for line in logged), logged
    assert any("warning[C010]: plugin 'nodeorder' has no argument 'leastrequested'; it is ignored" in line
               for line in logged), logged
