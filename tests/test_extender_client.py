"""Volcano's extender plugin as a client: real HTTP extenders on loopback, well- and ill-behaved.

The plugin (policies/volcano/plugins/extender.policy) calls the extender
through the standard library's ``Extender`` (runtime/framework/extender_lib.py);
these tests hold the call to Volcano's ``send``: its timeout, the 10 MiB cap
(upstream's TestMaxBodySizeLimit2), Go's error for every way a server can
misbehave, the session's deadline over all of it, and, through whole
sessions, what ``ignorable`` makes of each error, that both engines ask the
same questions, and that fumarole serve's extender endpoints understand the
requests the client sends.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from clusters import queue
from extender_servers import BIG, closed_port, misbehaving
from fumarole.runtime.api.model import Node, Task
from fumarole.runtime.authoring.scenario import decisions_as_expect, run_file
from fumarole.runtime.bundles.bundle import build_bundle
import fumarole.runtime.framework.budget as budget_module
from fumarole.runtime.framework.budget import StepBudget
from fumarole.runtime.framework.extender_http import MAX_BODY, Answer
from fumarole.runtime.framework.extender_lib import Extender
from fumarole.runtime.framework.extender_replies import RESPONSES, read_reply
from fumarole.runtime.framework.lifecycle import new_session, run_session
from fumarole.runtime.framework.policy_error import BudgetExhausted, PolicyRuntimeError
from fumarole.runtime.ingest.kube import cluster_from_objects
from fumarole.runtime.ingest.kube_convert import task_from_pod
from fumarole.runtime.ingest.scheduler_config import config_from_document

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
POD = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"uid": "c1-p1", "namespace": "c1", "name": "p1",
                    "annotations": {"scheduling.k8s.io/group-name": "pg1"}},
       "spec": {"containers": [{"resources": {"requests": {"cpu": "1"}}}]}, "status": {"phase": "Pending"}}


def task_and_node() -> tuple[Task, Node]:
    return task_from_pod(POD), cluster_from_objects([NODE], "test").snapshot().nodes["n1"]


def predicate(url: str, timeout: float, deadline_in: float | None = None) -> tuple[str, float]:
    """One predicate call: Go's error text ("" if none) and how long it took."""
    task, node = task_and_node()
    budget = StepBudget(timeout=deadline_in)
    start = time.monotonic()
    reply = Extender(budget, url, timeout).predicate("predicate", task, node)
    return reply.error, time.monotonic() - start


# -- the call ---------------------------------------------------------------------------------

def test_max_body_size_limit() -> None:
    """extender_test.go TestMaxBodySizeLimit2: an answer past 10 MiB is Go's MaxBytesReader error."""
    with misbehaving("huge") as (url, _):
        error, _ = predicate(url, 10.0)
    assert error == "http: request body too large"


def test_a_complete_value_within_the_cap_is_read_whatever_follows() -> None:
    """Go's Decoder reads the first value only: a body longer than 10 MiB is fine if that value ends before."""
    body = b'{"status": "no", "code": 2}' + b" " * MAX_BODY
    reply = read_reply(Answer(body[:MAX_BODY], truncated=True), "PredicateResponse")
    assert (reply.error, reply.message, reply.code) == ("", "no", 2)


@pytest.mark.parametrize("mode, expected", [
    ("garbage", "invalid character '<' looking for beginning of value"),
    ("error500", "failed predicate with extender at URL {url}/predicate, code 500"),
    ("close", 'Post "{url}/predicate": EOF'),
    ("truncated", "unexpected EOF"),  # the body ends early: the decoder's error, as in Go
])
def test_a_misbehaving_extender_is_an_error_in_go_words(mode: str, expected: str) -> None:
    with misbehaving(mode) as (url, asked):
        error, took = predicate(url, 5.0)
    assert error == expected.format(url=url)
    assert asked == ["/predicate"] and took < 4


def test_a_refused_connection_is_an_error() -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    error, _ = predicate(url, 5.0)
    assert error == f'Post "{url}/predicate": connect: connection refused'


@pytest.mark.parametrize("mode", ["silent", "drip"])
def test_the_timeout_bounds_the_whole_call(mode: str) -> None:
    """Client.Timeout covers the headers and the body: neither silence nor a slow drip outlasts it."""
    with misbehaving(mode) as (url, _):
        error, took = predicate(url, 0.4)
    assert "context deadline exceeded (Client.Timeout exceeded while" in error
    assert 0.35 <= took < 2.0


def test_without_a_timeout_the_session_deadline_ends_the_wait() -> None:
    """httpTimeout 0 is Go's "no timeout": the session's deadline still ends the call, and the session."""
    start = time.monotonic()
    with misbehaving("silent") as (url, _), pytest.raises(BudgetExhausted, match="deadline"):
        predicate(url, 0.0, deadline_in=0.5)
    assert time.monotonic() - start < 2.0


def test_the_url_is_the_prefix_without_trailing_slashes_then_the_verb() -> None:
    with misbehaving("refuse") as (url, asked):
        task, node = task_and_node()
        reply = Extender(StepBudget(), url + "/v1//", 5.0).predicate("filter", task, node)
    assert asked == ["/v1/filter"] and (reply.message, reply.code) == ("refused", 3)


# -- whole sessions: what ignorable makes of each error ---------------------------------------

def scenario(tmp_path: Path, arguments: dict, answers: dict, hooks: list, objects: list | None = None,
             actions: str = "", extra_plugins: list | None = None) -> Path:
    entry = {"name": "extender", "arguments": {"extender.urlPrefix": "http://ext.test", **arguments}}
    doc = {"name": "extender/authored", "scheduler": {"actions": actions, "tiers": [
        {"plugins": [*(extra_plugins or []), entry]}]},
        "extenders": {"http://ext.test": answers},
        "objects": objects or [NODE, {**NODE, "metadata": {"name": "n2"}}, POD,
                               queue("q1"),
                               {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                                "metadata": {"namespace": "c1", "name": "pg1"},
                                "spec": {"queue": "q1", "minMember": 1}}],
        "expectHooks": hooks}
    path = tmp_path / "case.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def expecting_binds(path: Path, binds: dict) -> Path:
    """The scenario at ``path`` asserting the binds it makes instead of the hooks' calls."""
    doc = yaml.safe_load(path.read_text())
    del doc["expectHooks"]
    doc["expect"] = {"binds": binds}
    path.write_text(yaml.safe_dump(doc))
    return path


def passes(path: Path) -> None:
    for engine in ("fast", "reference"):
        outcome = run_file(path, engine=engine)
        assert outcome.passed, f"{engine}: {outcome.difference}"


# A generous timeout: an answer in time must never become a timeout on a loaded machine (then a
# node would fail and another take the pod).  The case about timeouts sets its own short one.
PREDICATE = {"extender.predicateVerb": "predicate", "extender.httpTimeout": "10s"}


@pytest.mark.parametrize("answer", [{"status": 500}, {"raw": "garbage"}, {"delay": 1.0, "body": {}},
                                    {"body": {"code": "2"}}, {"body": [1]}])
@pytest.mark.parametrize("ignorable", [True, False])
def test_a_predicate_error_passes_the_node_only_when_ignorable(tmp_path, answer, ignorable) -> None:
    timeout = {"extender.httpTimeout": "300ms"} if "delay" in answer else {}
    path = scenario(tmp_path, {**PREDICATE, **timeout, "extender.ignorable": ignorable}, {"predicate": answer},
                    [{"hook": "predicate", "task": "c1/p1", "feasible": ["n1", "n2"] if ignorable else []}])
    passes(path)


@pytest.mark.parametrize("body, feasible", [
    ({"status": "", "code": 2}, ["n1", "n2"]),   # no message: the node passes, whatever the code
    ({"status": "no"}, []),                       # a message without a code: an Error
    ({"STATUS": "no", "code": 3}, []),            # Go matches keys case-insensitively
    ({"status": None, "code": 2}, ["n1", "n2"]),  # null leaves the field empty
])
def test_predicate_answers(tmp_path, body, feasible) -> None:
    passes(scenario(tmp_path, PREDICATE, {"predicate": {"body": body}},
                    [{"hook": "predicate", "task": "c1/p1", "feasible": feasible}]))


@pytest.mark.parametrize("code, binds", [(2, {}), (3, {}), (5, {}), (6, {"c1/p1": "n1"}), (42, {"c1/p1": "n1"})])
def test_a_code_outside_one_to_five_fails_no_node_in_allocate(tmp_path, code, binds) -> None:
    """PredicateForAllocateAction keeps only Unschedulable, UnschedulableAndUnresolvable, Error, Skip, Wait."""
    path = scenario(tmp_path, PREDICATE, {"predicate": {"body": {"status": "no", "code": code}}}, [],
                    actions="enqueue, allocate", extra_plugins=[{"name": "gang"}, {"name": "predicates"}])
    passes(expecting_binds(path, binds))


def test_an_unregistered_session_asks_nothing(tmp_path) -> None:
    """onSessionOpen failed and not ignorable: upstream returns before registering any hook."""
    arguments = {**PREDICATE, "extender.onSessionOpenVerb": "open"}
    passes(scenario(tmp_path, arguments, {"open": {"status": 503}, "predicate": {"body": {"status": "no"}}},
                    [{"hook": "predicate", "task": "c1/p1", "feasible": ["n1", "n2"]}]))
    passes(scenario(tmp_path, {**arguments, "extender.ignorable": True},
                    {"open": {"status": 503}, "predicate": {"body": {"status": "no"}}},
                    [{"hook": "predicate", "task": "c1/p1", "feasible": []}]))


PRIORITIZE = {"extender.prioritizeVerb": "prioritize", "extender.httpTimeout": "10s"}


@pytest.mark.parametrize("body, scores", [
    ({"nodeScore": {"n1": 7.5, "n2": 1, "elsewhere": 3}}, {"n1": 7.5, "n2": 1.0}),
    ({"nodeScore": {"n1": None}}, {"n1": 0.0}),
])
def test_prioritize_scores_by_node_name(tmp_path, body, scores) -> None:
    passes(scenario(tmp_path, PRIORITIZE, {"prioritize": {"body": body}},
                    [{"hook": "batchNodeOrder", "task": "c1/p1", "nodes": ["n1", "n2"], "scores": scores,
                      "exact": True}]))


@pytest.mark.parametrize("answer, ignorable, binds", [
    ({"status": 500}, False, {}),
    ({"status": 500}, True, {"c1/p1": "n1"}),
    # An answer that says it failed is an error whatever `ignorable` says (it covers the call only).
    ({"body": {"nodeScore": {"n1": 1}, "errorMessage": "down"}}, True, {}),
    ({"body": {"nodeScore": None}}, True, {}),
])
def test_a_prioritize_error_leaves_allocate_without_a_node(tmp_path, answer, ignorable, binds) -> None:
    """A failed batch score gives allocate no node (PrioritizeNodes returns no scores)."""
    path = scenario(tmp_path, {**PRIORITIZE, "extender.ignorable": ignorable}, {"prioritize": answer}, [],
                    actions="enqueue, allocate", extra_plugins=[{"name": "gang"}, {"name": "predicates"}])
    passes(expecting_binds(path, binds))


def test_victims_are_matched_to_candidates_by_uid(tmp_path) -> None:
    pods = [POD] + [{**POD, "metadata": {**POD["metadata"], "uid": f"c1-v{i}", "name": f"v{i}"},
                     "spec": {**POD["spec"], "nodeName": "n1"}, "status": {"phase": "Running"}} for i in range(3)]
    objects = [NODE, *pods, queue("q1"),
               {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                "metadata": {"namespace": "c1", "name": "pg1"}, "spec": {"queue": "q1", "minMember": 1}}]
    arguments = {"extender.preemptableVerb": "preemptable"}
    answer = {"status": 1, "victims": [{"UID": "c1-v2"}, {"uid": "elsewhere"}, None, {"UID": "c1-v0"}]}
    call = {"hook": "preemptable", "preemptor": "c1/p1", "candidates": ["c1/v0", "c1/v1", "c1/v2"]}
    passes(scenario(tmp_path, arguments, {"preemptable": {"body": answer}},
                    [{**call, "result": ["c1/v2", "c1/v0"]}], objects))


@pytest.mark.parametrize("answer, ignorable, result", [
    ({"body": {"status": -1}}, False, False),
    ({"body": {"status": 1}}, False, True),
    ({"body": {"status": 0}}, False, True),
    ({"status": 500}, False, False),
    ({"status": 500}, True, True),
])
def test_job_enqueueable_votes(tmp_path, answer, ignorable, result) -> None:
    passes(scenario(tmp_path, {"extender.jobEnqueueableVerb": "enqueueable", "extender.ignorable": ignorable},
                    {"enqueueable": answer}, [{"hook": "jobEnqueueable", "job": "c1/pg1", "result": result}]))


@pytest.mark.parametrize("watchdog", ["on time", "late"])
def test_a_silent_extender_never_outlasts_the_session_timeout(watchdog: str, monkeypatch) -> None:
    """httpTimeout 0s (no timeout of its own) against a server that never answers, with a session
    deadline: the session ends, with the deadline's R001, in bounded time -- also when the
    watchdog thread that empties the budget at the deadline does not run in time (a busy machine)."""
    if watchdog == "late":
        monkeypatch.setattr(budget_module._WATCHDOG, "watch", lambda budget, deadline: None)
    with misbehaving("silent") as (url, asked):
        config = config_from_document({"actions": "enqueue, allocate", "tiers": [{"plugins": [
            {"name": "extender", "arguments": {"extender.urlPrefix": url, "extender.httpTimeout": "0s",
                                               "extender.predicateVerb": "predicate"}}]}]}, "conf")
        cluster = cluster_from_objects([NODE, POD, queue("q1"),
                                        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                                         "metadata": {"namespace": "c1", "name": "pg1"},
                                         "spec": {"queue": "q1", "minMember": 1}}], "test")
        bundle = build_bundle(config)  # compiling (cold when the test runs alone) is not the session's time
        start = time.monotonic()
        with pytest.raises(PolicyRuntimeError, match="deadline"):
            run_session(new_session(bundle, cluster, budget=StepBudget(timeout=1.0)))
    assert time.monotonic() - start < 5 and asked == ["/predicate"]


# -- both engines ask the same questions ------------------------------------------------------

class _Recorder(BaseHTTPRequestHandler):
    """Answers predicate (refusing nodes whose name ends in 0 or 3) and prioritize (a score per name),
    and records each question: the verb, the task, the node(s)."""

    asked: list[tuple] = []

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        verb = self.path.rsplit("/", 1)[-1]
        if verb == "predicate":
            name = body["node"]["Name"]
            self.asked.append((verb, body["task"]["Name"], name))
            answer: dict = {"status": "busy" if name[-1] in "03" else "", "code": 2}
        elif verb == "prioritize":
            names = [n["Name"] for n in body["nodes"]]
            self.asked.append((verb, body["task"]["Name"], tuple(names)))
            answer = {"nodeScore": {n: float(int(n[1:]) % 4) for n in names}}
        else:
            self.asked.append((verb,))
            answer = {}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args) -> None:  # noqa: A002
        pass


def test_both_engines_make_the_same_calls_and_decisions() -> None:
    """The fast engine runs node rules over all nodes at once; a hook that calls an extender must
    still be asked exactly where and when the per-node scan asks it (no node twice, none extra)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    config = config_from_document({"actions": "enqueue, allocate, backfill", "tiers": [
        {"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
        {"plugins": [{"name": "drf"}, {"name": "predicates"}, {"name": "proportion"}, {"name": "nodeorder"},
                     {"name": "extender", "arguments": {
                         "extender.urlPrefix": url, "extender.predicateVerb": "predicate",
                         "extender.prioritizeVerb": "prioritize", "extender.onSessionOpenVerb": "open",
                         "extender.onSessionCloseVerb": "close"}}]}]}, "conf")
    objects: list[dict] = [{**NODE, "metadata": {"name": f"n{i}"}} for i in range(6)]
    objects.append(queue("q1"))
    for j in range(2):
        objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                        "metadata": {"namespace": "c1", "name": f"pg{j}"}, "spec": {"queue": "q1", "minMember": 2}})
        for k in range(3):
            objects.append({**POD, "metadata": {"uid": f"u{j}{k}", "namespace": "c1", "name": f"p{j}{k}",
                                                "annotations": {"scheduling.k8s.io/group-name": f"pg{j}"}},
                            "spec": {"containers": [{"resources": {"requests": {"cpu": "2"}}}]}})
    runs = {}
    try:
        for engine in ("fast", "reference"):
            _Recorder.asked = []
            decisions = run_session(new_session(build_bundle(config), cluster_from_objects(objects, "test"), engine=engine))
            runs[engine] = (decisions_as_expect(decisions)["binds"], list(_Recorder.asked))
    finally:
        server.shutdown()
        server.server_close()
    binds, asked = runs["fast"]
    assert runs["reference"] == (binds, asked)
    assert set(binds.values()) <= {"n1", "n2", "n4", "n5"} and len(binds) == 6
    predicates = [a for a in asked if a[0] == "predicate"]
    assert len(predicates) == len(set(predicates))  # no node asked twice for a task
    assert any(a[0] == "prioritize" for a in asked) and asked[0] == ("open",) and asked[-1] == ("close",)


class _OpenRecorder(BaseHTTPRequestHandler):
    """Keeps the body of every onSessionOpen request and answers {}."""

    bodies: list[bytes] = []

    def do_POST(self) -> None:  # noqa: N802
        self.bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, format, *args) -> None:  # noqa: A002
        pass


def _quota(namespace: str, name: str, hard: dict, used: dict | None = None) -> dict:
    status = {"hard": hard, **({"used": used} if used is not None else {})}
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"namespace": namespace, "name": name},
            "status": status}


def test_on_session_open_sends_the_namespaces_quotas_as_namespace_info() -> None:
    """ssn.NamespaceInfo: a namespace per ResourceQuota namespace (Volcano's cache makes one only for
    those), each quota's status by name, hard/used left out when empty; Go sorts the map keys."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _OpenRecorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    config = config_from_document({"actions": "", "tiers": [{"plugins": [{"name": "extender", "arguments": {
        "extender.urlPrefix": f"http://127.0.0.1:{server.server_address[1]}",
        "extender.onSessionOpenVerb": "onSessionOpen"}}]}]}, "conf")
    objects = [NODE, POD, _quota("team-b", "gpus", {"requests.nvidia.com/gpu": "4"}, {}),
               _quota("c1", "mem", {"requests.memory": "8Gi"}, {"requests.memory": "1Gi"}),
               _quota("c1", "cpu", {"requests.cpu": "10", "limits.cpu": "20"}, {"requests.cpu": "1"}),
               queue("q1")]
    _OpenRecorder.bodies = []
    try:
        for engine in ("fast", "reference"):
            run_session(new_session(build_bundle(config), cluster_from_objects(objects, "test"), engine=engine))
    finally:
        server.shutdown()
        server.server_close()
    expected = {
        "c1": {"Name": "c1", "QuotaStatus": {
            "cpu": {"hard": {"limits.cpu": "20", "requests.cpu": "10"}, "used": {"requests.cpu": "1"}},
            "mem": {"hard": {"requests.memory": "8Gi"}, "used": {"requests.memory": "1Gi"}}}},
        "team-b": {"Name": "team-b", "QuotaStatus": {"gpus": {"hard": {"requests.nvidia.com/gpu": "4"}}}}}
    assert len(_OpenRecorder.bodies) == 2
    for body in _OpenRecorder.bodies:
        sent = json.loads(body)["NamespaceInfo"]
        assert sent == expected
        assert list(sent) == ["c1", "team-b"] and list(sent["c1"]["QuotaStatus"]) == ["cpu", "mem"]


# -- against fumarole serve's extender endpoints ------------------------------------------------

def test_fumarole_serve_answers_the_client_as_the_same_rules_decide_in_process(tmp_path) -> None:
    """Volcano's plugin configuration pointed at `fumarole serve` (the server side of the same protocol):
    its site bundle refuses n0 (unresolvable) and prefers n2.  The session decides exactly what the
    site plugin decides in process, so the requests the client sends are what serve reads."""
    from serving_helpers import make_service, running
    from test_extender import SITE_POLICY, site_bundle

    from fumarole.runtime.bundles.bundle import load_bundle_dir

    site_arguments = {"reserved_nodes": ["n0"], "preferred_node": "n2"}
    base = [{"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
            {"plugins": [{"name": "drf"}, {"name": "predicates"}, {"name": "proportion"}, {"name": "nodeorder"}]}]
    objects: list[dict] = [{**NODE, "metadata": {"name": f"n{i}"}} for i in range(4)]
    objects += [queue("q1"),
                {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                 "metadata": {"namespace": "c1", "name": "pg1"}, "spec": {"queue": "q1", "minMember": 1}}]
    objects += [{**POD, "metadata": {**POD["metadata"], "uid": f"u{k}", "name": f"p{k}"},
                 "spec": {"containers": [{"resources": {"requests": {"cpu": "3"}}}]}} for k in range(4)]
    with running(make_service(site_bundle(tmp_path / "served", **site_arguments))) as url:
        config = config_from_document({"actions": "enqueue, allocate", "tiers": [*base[:1], {"plugins": [
            *base[1]["plugins"], {"name": "extender", "arguments": {
                "extender.urlPrefix": url + "/v1/extender", "extender.httpTimeout": "10s",
                "extender.onSessionOpenVerb": "onSessionOpen", "extender.onSessionCloseVerb": "onSessionClose",
                "extender.predicateVerb": "predicate", "extender.prioritizeVerb": "prioritize"}}]}]}, "conf")
        through_serve = decisions_as_expect(run_session(new_session(build_bundle(config), cluster_from_objects(objects, "t"))))
    folder = tmp_path / "in-process"
    (folder / "plugins").mkdir(parents=True)
    (folder / "plugins" / "site.policy").write_text(SITE_POLICY)
    (folder / "bundle.yaml").write_text(yaml.safe_dump({
        "apiVersion": "fumarole/v1", "kind": "PolicyBundle", "metadata": {"name": "in-process", "revision": "1"},
        "uses": ["volcano"], "sources": ["plugins/*.policy"], "actions": ["enqueue", "allocate"],
        "tiers": [*base[:1], {"plugins": [*base[1]["plugins"], {"name": "site", "arguments": site_arguments}]}]}))
    in_process = decisions_as_expect(run_session(new_session(load_bundle_dir(folder), cluster_from_objects(objects, "t"))))
    assert through_serve == in_process
    assert through_serve["binds"]["c1/p0"] == "n2" and "n0" not in through_serve["binds"].values()


# -- the answer's decoding, fuzzed ----------------------------------------------------------------

_JSON = st.recursive(st.none() | st.booleans() | st.integers(-(2 ** 70), 2 ** 70) | st.floats(allow_nan=False)
                     | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                         st.sampled_from(["status", "Status", "code", "nodeScore", "errorMessage", "victims", "UID",
                                          "overused", "x"]), inner, max_size=4), max_leaves=12)
_RESPONSES = sorted(RESPONSES)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.one_of(st.binary(max_size=64), _JSON.map(lambda v: json.dumps(v).encode())),
       response=st.sampled_from(_RESPONSES), truncated=st.booleans())
def test_any_answer_decodes_to_a_reply_or_an_error(body: bytes, response: str, truncated: bool) -> None:
    """Whatever an extender sends, reading it gives a reply or Go's error, never an exception;
    and a field is set only from a value of its Go type."""
    reply = read_reply(Answer(body, truncated), response)
    assert isinstance(reply.error, str) and isinstance(reply.message, str)
    assert isinstance(reply.code, int) and isinstance(reply.status, int) and -(2 ** 63) <= reply.code < 2 ** 63
    assert all(isinstance(v, float) for v in (reply.node_score or {}).values())
    assert all(isinstance(uid, str) for uid in reply.victims)
    assert isinstance(reply.overused, bool) and isinstance(reply.ready, bool)


@settings(max_examples=100, deadline=None)
@given(message=st.text(max_size=20), code=st.integers(-(2 ** 63), 2 ** 63 - 1),
       scores=st.dictionaries(st.text(max_size=6), st.floats(allow_nan=False, allow_infinity=False), max_size=4))
def test_well_typed_answers_read_back_exactly(message: str, code: int, scores: dict) -> None:
    predicate = read_reply(Answer(json.dumps({"status": message, "code": code}).encode()), "PredicateResponse")
    assert (predicate.error, predicate.message, predicate.code) == ("", message, code)
    prioritize = read_reply(Answer(json.dumps({"nodeScore": scores}).encode()), "PrioritizeResponse")
    assert (prioritize.error, prioritize.node_score) == ("", scores)
