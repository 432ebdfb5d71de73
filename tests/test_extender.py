"""The Volcano extender endpoints, with request bodies shaped exactly as the protocol's worked example.

``volcano_extender_example.json`` holds the example of the protocol reference
(section 3.5) written out in full: TaskInfo T1 (p-1 Running on node-1), T2
(p-2 Pending), NodeInfo N1, QueueInfo Q1, JobInfo J1 (state A) and J1B (state B).
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path

import httpx
import pytest
import yaml
from serving_helpers import admin_headers, archive, make_service, running

EXAMPLE = json.loads((Path(__file__).with_name("volcano_extender_example.json")).read_text())
T1, T2, N1, Q1, J1, J1B = (EXAMPLE[k] for k in ("T1", "T2", "N1", "Q1", "J1", "J1B"))
PREFIX = "/v1/extender"

SITE_POLICY = """plugin site

# The site rules a live Volcano asks fumarole about through its extender plugin.
arg protected: list[string] = []
arg reserved_nodes: list[string] = []
arg busy_nodes: list[string] = []
arg overused_queues: list[string] = []
arg closed_namespaces: list[string] = []
arg preferred_node: string = ""

on predicate(task, node):
    fail unresolvable "node is reserved" when node.name in reserved_nodes
    fail "node is busy" when node.name in busy_nodes

on node_order(task, node) = 10.0 if node.name == preferred_node else 0.0

on overused(queue) = queue.name in overused_queues

on job_enqueueable(job):
    reject when job.namespace in closed_namespaces
"""

VICTIM_RULES = """
on preemptable, reclaimable(evictor, candidates):
    for candidate in candidates:
        victim candidate when candidate.name not in protected
"""


def site_bundle(folder: Path, revision: str = "1", victims_hooks: bool = True, **arguments) -> bytes:
    (folder / "plugins").mkdir(parents=True, exist_ok=True)
    policy = SITE_POLICY + (VICTIM_RULES if victims_hooks else "")
    (folder / "plugins" / "site.policy").write_text(policy)
    manifest = {"apiVersion": "fumarole/v1", "kind": "PolicyBundle",
                "metadata": {"name": "extender-site", "revision": revision},
                "uses": ["volcano"], "sources": ["plugins/*.policy"], "actions": ["enqueue", "allocate"],
                "tiers": [{"plugins": [
                    {"name": "gang", "enableReclaimable": False, "enablePreemptable": False},
                    {"name": "site", "arguments": arguments}]}]}
    (folder / "bundle.yaml").write_text(yaml.safe_dump(manifest))
    return archive(folder)


@pytest.fixture
def serve(tmp_path: Path):
    """serve(**site arguments) -> base URL of a live service whose active bundle has those arguments."""
    servers = []

    def start(victims_hooks: bool = True, **arguments) -> httpx.Client:
        service = make_service(site_bundle(tmp_path / f"b{len(servers)}", victims_hooks=victims_hooks, **arguments))
        context = running(service)
        url = context.__enter__()
        servers.append(context)
        return httpx.Client(base_url=url + PREFIX)
    yield start
    for context in servers:
        context.__exit__(None, None, None)


def post(client: httpx.Client, verb: str, body: dict) -> dict:
    response = client.post("/" + verb, json=body)
    assert response.status_code == 200, response.text
    assert response.headers["x-fumarole-digest"].startswith("sha256:")
    return response.json()


# -- reclaimable / preemptable ------------------------------------------------------------

@pytest.mark.parametrize("verb", ["reclaimable", "preemptable"])
def test_victims_are_the_evictees_echoed_unchanged(serve, verb) -> None:
    client = serve()
    answer = post(client, verb, {"evictor": T2, "evictees": [T1]})
    assert answer == {"status": 1, "victims": [T1]}
    raw = client.post("/" + verb, content=json.dumps({"evictor": T2, "evictees": [T1]})).json()
    assert json.dumps(raw["victims"][0], sort_keys=True) == json.dumps(T1, sort_keys=True)


def test_a_protected_task_gives_an_empty_vote(serve) -> None:
    assert post(serve(protected=["p-1"]), "reclaimable", {"evictor": T2, "evictees": [T1]}) == \
        {"status": 1, "victims": []}


def test_a_bundle_without_victim_rules_abstains(serve) -> None:
    assert post(serve(victims_hooks=False), "reclaimable", {"evictor": T2, "evictees": [T1]}) == {"status": 0}


def test_evictees_keep_their_order_and_duplicates(serve) -> None:
    other = copy.deepcopy(T1)
    other.update(UID="uid-p3", Name="p-3")
    other["Pod"]["metadata"].update(name="p-3", uid="uid-p3")
    answer = post(serve(protected=["p-1"]), "reclaimable", {"evictor": T2, "evictees": [other, T1, other]})
    assert answer == {"status": 1, "victims": [other, other]}


# -- predicate / prioritize -------------------------------------------------------------------

def test_predicate_fit_unschedulable_and_unresolvable(serve) -> None:
    assert post(serve(), "predicate", {"task": T2, "node": N1}) == {"status": "", "code": 0}
    assert post(serve(busy_nodes=["node-1"]), "predicate", {"task": T2, "node": N1}) == \
        {"status": "node is busy", "code": 2}
    reserved = post(serve(reserved_nodes=["node-1"], busy_nodes=["node-1"]), "predicate", {"task": T2, "node": N1})
    assert reserved == {"status": "node is reserved", "code": 3}
    assert type(reserved["code"]) is int


def test_prioritize_scores_every_candidate(serve) -> None:
    assert post(serve(preferred_node="node-1"), "prioritize", {"task": T2, "nodes": [N1]}) == \
        {"nodeScore": {"node-1": 10.0}, "errorMessage": ""}
    assert post(serve(), "prioritize", {"task": T2, "nodes": []}) == {"nodeScore": {}, "errorMessage": ""}


# -- queue and job hooks ------------------------------------------------------------------------

def test_queue_overused(serve) -> None:
    assert post(serve(), "queueOverused", {"queue": Q1}) == {"overused": False}
    assert post(serve(overused_queues=["q1"]), "queueOverused", {"queue": Q1}) == {"overused": True}


def test_job_enqueueable_abstains_or_rejects_never_permits(serve) -> None:
    assert post(serve(), "jobEnqueueable", {"job": J1}) == {"status": 0}
    assert post(serve(closed_namespaces=["team-a"]), "jobEnqueueable", {"job": J1}) == {"status": -1}


def test_job_ready_is_gangs_answer(serve) -> None:
    client = serve()
    assert post(client, "jobReady", {"job": J1B}) == {"status": False}
    ready = copy.deepcopy(J1B)
    ready["MinAvailable"] = 1
    ready["PodGroup"]["spec"]["minMember"] = 1
    assert post(client, "jobReady", {"job": ready}) == {"status": True}


# -- sessions ----------------------------------------------------------------------------------

def open_request() -> dict:
    return {"Jobs": {"team-a/pg-1": J1B}, "Nodes": {"node-1": N1}, "Queues": {"q1": Q1}, "NamespaceInfo": {},
            "RevocableNodes": {}, "NodeList": None}


def test_a_volcano_session_pins_the_bundle_it_opened_with(serve, tmp_path: Path) -> None:
    client = serve()
    base = str(client.base_url).rstrip("/").removesuffix(PREFIX)
    assert post(client, "onSessionOpen", open_request()) == {}
    pinned = client.post("/reclaimable", json={"evictor": T2, "evictees": [T1]})
    assert pinned.json() == {"status": 1, "victims": [T1]}
    swap = httpx.put(base + "/v1/bundles/active", headers=admin_headers(),
                     content=site_bundle(tmp_path / "protecting", "2", protected=["p-1"]))
    assert swap.status_code == 200
    during = client.post("/reclaimable", json={"evictor": T2, "evictees": [T1]})
    assert during.json() == {"status": 1, "victims": [T1]}
    assert during.headers["x-fumarole-digest"] == pinned.headers["x-fumarole-digest"]
    assert post(client, "queueOverused", {"queue": Q1}) == {"overused": False}
    assert post(client, "predicate", {"task": T2, "node": N1}) == {"status": "", "code": 0}
    assert post(client, "onSessionClose", {}) == {}
    after = client.post("/reclaimable", json={"evictor": T2, "evictees": [T1]})
    assert after.json() == {"status": 1, "victims": []}
    assert after.headers["x-fumarole-digest"] == swap.json()["active"]["digest"]


def test_session_open_uses_the_jobs_resolved_priority(serve) -> None:
    client = serve()
    request = open_request()
    request["Jobs"]["team-a/pg-1"] = dict(J1B, Priority=1000)
    assert post(client, "onSessionOpen", request) == {}
    assert post(client, "jobEnqueueable", {"job": J1B}) == {"status": 0}
    assert post(client, "onSessionClose", {}) == {}


# -- errors ------------------------------------------------------------------------------------

@pytest.mark.parametrize("verb,body,status", [
    ("predicate", b'{"task": ', 400),
    ("predicate", b"[1, 2]", 400),
    ("predicate", json.dumps({"node": N1}).encode(), 400),
    ("reclaimable", json.dumps({"evictor": T2, "evictees": [{"UID": "x"}]}).encode(), 400),
    ("queueOverused", json.dumps({"queue": {"Queue": {"metadata": {}}}}).encode(), 400),
    ("onSessionOpen", json.dumps({"Jobs": []}).encode(), 400),
    ("bindings", b"{}", 404),
])
def test_bad_requests_are_answered_not_crashed(serve, verb, body, status) -> None:
    client = serve()
    response = client.post("/" + verb, content=body)
    assert response.status_code == status and "error" in response.json()
    assert client.get("/predicate").status_code == 405
    assert post(client, "queueOverused", {"queue": Q1}) == {"overused": False}


def test_the_example_extender_bundle_spares_young_tasks(tmp_path: Path) -> None:
    from fumarole.runtime.bundles.archive import folder_files, pack

    service = make_service(pack(folder_files(Path(__file__).resolve().parent.parent / "examples" / "extender")))
    young = copy.deepcopy(T1)
    young.update(UID="uid-young", Name="young")
    young["Pod"]["metadata"].update(name="young", uid="uid-young")
    young["Pod"]["status"]["startTime"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with running(service) as url, httpx.Client(base_url=url + PREFIX) as client:
        assert post(client, "reclaimable", {"evictor": T2, "evictees": [T1, young]}) == {"status": 1, "victims": [T1]}
        assert post(client, "preemptable", {"evictor": T2, "evictees": [young]}) == {"status": 1, "victims": []}
        assert post(client, "predicate", {"task": T2, "node": N1}) == {"status": "", "code": 0}
