"""`fumarole serve` against hostile input (issue 8, section 5): never a 500, never a wedged server.

A corpus of ~300 malformed session bodies, a shadow bundle that fails, an archive that
cannot be unpacked, and compile folders a kill -9 left behind.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from fumarole.runtime.bundles.archive import folder_files, pack
from fumarole.runtime.serve.state import COMPILE, StateDir
from fuzz_properties import raw_tar
from hostile_inputs import BASE, as_yaml, corpus
from serving_helpers import FAILING_POLICY, admin_headers, archive, make_service, namespaces, running, write_bundle

YAML = {"content-type": "application/yaml"}


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return write_bundle(tmp_path / "site", "1", namespaces())


def test_no_malformed_session_body_is_a_500(site):
    bodies = corpus()
    assert len(bodies) >= 200
    service = make_service(archive(site))
    outcomes: dict[int, int] = {}
    with running(service) as url, httpx.Client(base_url=url, timeout=30) as client:
        for label, body, content_type in bodies:
            started = time.perf_counter()
            response = client.post("/v1/sessions", content=body, headers={"content-type": content_type})
            assert response.status_code in (200, 400), (label, response.status_code, response.text[:300])
            assert time.perf_counter() - started < 60, label  # a hang guard, not a speed test
            if response.status_code == 400:
                diagnostic = response.json()["diagnostics"][0]
                assert diagnostic["code"].startswith("K"), (label, diagnostic)
                if diagnostic["code"] == "K008":  # no object at all: the whole body is at fault, no line is
                    assert diagnostic["line"] is None and diagnostic["col"] is None, (label, diagnostic)
                elif content_type == "application/yaml":  # YAML keeps positions; JSON bodies name the request
                    assert diagnostic["line"] >= 1 and diagnostic["col"] >= 1, (label, diagnostic)
            outcomes[response.status_code] = outcomes.get(response.status_code, 0) + 1
        assert client.get("/healthz").status_code == 200
        assert client.post("/v1/sessions", content=as_yaml(BASE), headers=YAML).status_code == 200
    assert outcomes[400] > 150 and outcomes[200] > 20  # both kinds: broken for real, and harmless changes


@pytest.mark.parametrize("body, where", [
    (b"items: " + b"[" * 100_000 + b"]" * 100_000, (1, 107)),
    (b"kind: PodGroup\nmetadata: {name: pg}\nstatus: x\n", (3, 9)),
    (b"kind: Node\nmetadata: {name: n, name: m}\n", (2, 21)),
])
def test_a_hostile_body_is_a_positioned_400_and_the_server_keeps_serving(site, body, where):
    service = make_service(archive(site))
    with running(service) as url, httpx.Client(base_url=url, timeout=30) as client:
        response = client.post("/v1/sessions", content=body, headers=YAML)
        assert response.status_code == 400
        diagnostic = response.json()["diagnostics"][0]
        assert (diagnostic["line"], diagnostic["col"]) == where
        assert client.get("/healthz").status_code == 200


def test_a_failing_shadow_never_touches_the_active_decisions(site, tmp_path, monkeypatch):
    service = make_service(archive(site))
    failing = write_bundle(tmp_path / "failing", "9", [], FAILING_POLICY)
    with running(service) as url, httpx.Client(base_url=url, timeout=30) as client:
        plain = client.post("/v1/sessions", content=as_yaml(BASE), headers=YAML).json()
        installed = client.put("/v1/bundles/shadow", content=archive(failing), headers=admin_headers())
        assert installed.status_code == 200
        policy_failure = client.post("/v1/sessions", content=as_yaml(BASE), headers=YAML)
        # ... and a shadow failing in a way no policy diagnostic covers (an internal error)
        real_decide = service.decide

        def shadow_crashes(loaded, cluster, clock=None, state=None):
            if loaded is service.registry.shadow.loaded:
                raise RuntimeError("shadow exploded")
            return real_decide(loaded, cluster, clock, state)
        monkeypatch.setattr(service, "decide", shadow_crashes)
        internal = client.post("/v1/sessions", content=as_yaml(BASE), headers=YAML)
        status = client.get("/v1/status").json()
        metrics = client.get("/metrics").text
    for response in (policy_failure, internal):
        assert response.status_code == 200
        assert response.json()["decisions"] == plain["decisions"]
    assert "error[R001]" in policy_failure.json()["shadow"]["error"]
    assert "internal error in the shadow session: RuntimeError: shadow exploded" in internal.json()["shadow"]["error"]
    assert status["counts"]["shadowFailures"] == 2 and status["counts"]["failedSessions"] == 0
    assert "shadow exploded" in status["lastShadowError"]["error"]
    assert "fumarole_shadow_failures_total 2" in metrics


def test_an_archive_with_a_file_where_a_folder_must_be_is_a011(site):
    files = folder_files(site)
    files["plugins/site.policy/inner"] = b"plugin inner\n"
    service = make_service(archive(site))
    with running(service) as url, httpx.Client(base_url=url, timeout=30) as client:
        for data in (pack(files), raw_tar(files)):
            response = client.put("/v1/bundles/active", content=data, headers=admin_headers())
            assert response.status_code == 422, response.text
            assert response.json()["diagnostics"] == [{
                "code": "A011", "severity": "error", "file": "upload", "line": None, "col": None,
                "message": "member plugins/site.policy is a file, but plugins/site.policy/inner puts a folder at "
                           "the same path"}]
        assert client.get("/healthz").status_code == 200


def test_compile_folders_live_in_the_state_folder_and_a_crash_leftover_is_cleaned(site, tmp_path, monkeypatch):
    state = tmp_path / "state"
    leftover = state / COMPILE / "fumarole-bundle-killed"  # what a kill -9 mid-compile leaves
    (leftover / "plugins").mkdir(parents=True)
    (leftover / "plugins" / "site.policy").write_text("plugin half_written\n")
    seen: list[Path] = []
    import fumarole.runtime.bundles.loader as loader

    real = loader.load_bundle_dir

    def spy(folder: Path):
        seen.append(folder)
        return real(folder)
    monkeypatch.setattr(loader, "load_bundle_dir", spy)
    service = make_service(archive(site), state=state)
    assert not leftover.exists() and (state / COMPILE).is_dir()
    assert seen and all(folder.parent == (state / COMPILE).resolve() for folder in seen)
    assert list((state / COMPILE).iterdir()) == []  # removed after each compile
    assert StateDir.open(state).compile_path == state / COMPILE
    assert service.registry.active is not None
