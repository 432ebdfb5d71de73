"""`fumarole snapshot` against a loopback API server that is silent, endless, huge or malformed: F005, exit 2, soon."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import threading
import time
from pathlib import Path
from typing import Callable

import pytest
import yaml
from fumarole.runtime.ingest import snapshot
from loopback_api import CONFIGMAP, NODES, JsonHandler, loopback_server, write_kubeconfig
EMPTY_LIST = {"kind": "List", "apiVersion": "v1", "metadata": {}, "items": []}
STOP = threading.Event()  # set at teardown: every stalling handler gives up


class _Hostile(JsonHandler):
    """Answers NODES (or, with ``on_configmap``, the ConfigMap) with ``behave``; everything else politely."""

    behave: Callable[["_Hostile"], None] = lambda self: None
    path_to_break = NODES

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path.split("?")[0] == self.path_to_break:
            type(self).behave(self)
        else:
            self.send_json(200, EMPTY_LIST)


# Small size and page limits; the time limits stay the defaults unless a test is about one of them
# (then it shortens that one): a polite reply on a loaded machine can take longer than a second.
SMALL = snapshot.Limits(reply_bytes=1 << 20, total_bytes=4 << 20, max_pages=50)
SILENT_FOR = 2  # read_seconds of the tests whose server says nothing (it stays silent for 30 s)
TRICKLING_FOR = 3  # reply_seconds of the test whose server never finishes (it trickles until teardown)


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch):
    """hostile(behave, path, **limits) -> kubeconfig of a loopback server misbehaving on ``path``;
    ``limits`` replace fields of SMALL."""
    servers = contextlib.ExitStack()
    STOP.clear()

    def start(behave: Callable[[_Hostile], None], path: str = NODES, **limits: float) -> Path:
        monkeypatch.setattr(snapshot, "DEFAULT_LIMITS", dataclasses.replace(SMALL, **limits))
        handler = type("Handler", (_Hostile,), {"behave": behave, "path_to_break": path})
        server = servers.enter_context(loopback_server(handler))
        return write_kubeconfig(tmp_path / "kubeconfig", server.server_address[1])
    yield start
    STOP.set()
    servers.close()


def _silent(handler: _Hostile) -> None:
    STOP.wait(30)


def _endless(handler: _Hostile) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.end_headers()
    handler.wfile.write(b'{"items": [')
    while not STOP.is_set():
        try:
            handler.wfile.write(b'{"metadata": {"name": "n"}},' * 1000)
        except OSError:
            return


def _declared_huge(handler: _Hostile) -> None:
    handler.send_response(200)
    handler.send_header("Content-Length", str(3 << 30))
    handler.end_headers()
    handler.wfile.write(b"{")
    STOP.wait(30)


def _trickle(handler: _Hostile) -> None:
    handler.send_response(200)
    handler.end_headers()
    while not STOP.is_set():
        try:
            handler.wfile.write(b" ")
            handler.wfile.flush()
        except OSError:
            return
        time.sleep(0.2)


def _replying(body: bytes | object, status: int = 200) -> Callable[[_Hostile], None]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return lambda handler: handler.send_raw(status, data)


def _continue_forever(handler: _Hostile) -> None:
    handler.send_json(200, {"metadata": {"continue": f"t{time.monotonic_ns()}"}, "items": []})


SHORTENED: dict[Callable[[_Hostile], None], dict[str, float]] = {
    _silent: {"read_seconds": SILENT_FOR}, _trickle: {"reply_seconds": TRICKLING_FOR}}


@pytest.mark.parametrize("behave, message", [
    (_silent, f"the API server sent nothing for {SILENT_FOR} s while answering GET {NODES}"),
    (_endless, f"the reply to GET {NODES} is larger than the 1,048,576 bytes fumarole reads"),
    (_declared_huge, f"the reply to GET {NODES} is 3,221,225,472 bytes, more than the 1,048,576 fumarole reads"),
    (_trickle, f"the reply to GET {NODES} took longer than {TRICKLING_FOR} s"),
    (_continue_forever, f"GET {NODES} did not end after 50 pages"),
    (_replying({"metadata": {"continue": "same"}, "items": []}),
     f"the API server answered GET {NODES} with the same continue token twice"),
    (_replying({}, 500), f"the API server answered 500 to GET {NODES}"),
    (_replying({}, 404), f"the API server answered 404 to GET {NODES}"),
    (_replying(b"<html>"), f"the reply to GET {NODES} is not JSON fumarole reads: malformed JSON: Expecting value"),
    (_replying(b"\xff\xfe"), f"the reply to GET {NODES} is not UTF-8 JSON (byte 0)"),
    (_replying(b"[" * 5000), "nested deeper than 100 levels"),
    (_replying(b'{"items": [], "items": []}'), "malformed JSON: duplicate key 'items'"),
    (_replying([]), f"the reply to GET {NODES} is not a JSON object but a list"),
    (_replying("x"), f"the reply to GET {NODES} is not a JSON object but a string"),
    (_replying({"items": 5}), f"the reply to GET {NODES} has items that are a number, not a list"),
    (_replying({"items": {"a": 1}}), f"the reply to GET {NODES} has items that are an object, not a list"),
    (_replying({"items": [None]}), f"the reply to GET {NODES} has items[0] that is null, not an object"),
    (_replying({"items": [{}]}), f"the reply to GET {NODES} has items[0] without metadata (an object)"),
    (_replying({"items": [{"metadata": "x"}]}), f"the reply to GET {NODES} has items[0] without metadata"),
    (_replying({"metadata": [], "items": []}), f"the reply to GET {NODES} has metadata that is a list"),
    (_replying({"metadata": {"continue": 7}, "items": []}), "has a metadata.continue that is a number"),
])
def test_a_misbehaving_api_server_is_f005_and_exit_2_in_bounded_time(cli, hostile, behave, message):
    """Bounded: the stalling servers hold out 30 s or more, so 20 s proves a limit ended the read."""
    kubeconfig = hostile(behave, **SHORTENED.get(behave, {}))
    started = time.monotonic()
    result = cli("snapshot", "--kubeconfig", str(kubeconfig))
    assert time.monotonic() - started < 20
    assert result.code == 2, result.err
    assert f"{kubeconfig}: error[F005]: " in result.err and message in result.err
    assert "Traceback" not in result.err and "internal error" not in result.err


@pytest.mark.parametrize("reply, message", [
    (b"[1]", f"the reply to GET {CONFIGMAP} is not a JSON object but a list"),
    (json.dumps({"data": ["x"]}).encode(), f"the reply to GET {CONFIGMAP} has data that is a list, not an object"),
    (json.dumps({"data": {"volcano-scheduler.conf": 5}}).encode(),
     "has data.volcano-scheduler.conf that is a number, not a string"),
])
def test_a_malformed_configmap_reply_is_f005(cli, hostile, reply, message):
    kubeconfig = hostile(_replying(reply), CONFIGMAP)
    result = cli("run", "--kubeconfig", str(kubeconfig))
    assert result.code == 2 and message in result.err and "Traceback" not in result.err


def test_a_configmap_without_data_means_volcanos_defaults(cli, hostile, tmp_path):
    kubeconfig = hostile(_replying({"kind": "ConfigMap", "data": None}), CONFIGMAP)
    out = tmp_path / "cluster.yaml"
    result = cli("snapshot", "--kubeconfig", str(kubeconfig), "-o", str(out))
    assert result.code == 0, result.err
    assert yaml.safe_load(out.read_text())["items"] == [] and not (tmp_path / "volcano-scheduler.conf").exists()


def test_lists_are_read_page_by_page(cli, hostile, tmp_path):
    pages = {"": ({"continue": "p2"}, ["a", "b"]), "p2": ({"continue": "p3"}, ["c"]), "p3": ({}, ["d"])}
    asked: list[str] = []

    def paged(handler: _Hostile) -> None:
        from urllib.parse import parse_qs, urlsplit
        query = parse_qs(urlsplit(handler.path).query)
        asked.append(query.get("continue", [""])[0] + "@" + query["limit"][0])
        metadata, names = pages[query.get("continue", [""])[0]]
        handler.send_json(200, {"metadata": metadata, "items": [
            {"metadata": {"name": n}, "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"}}}
            for n in names]})
    kubeconfig = hostile(paged)
    out = tmp_path / "cluster.yaml"
    assert cli("snapshot", "--kubeconfig", str(kubeconfig), "-o", str(out)).code == 0
    assert asked == ["@500", "p2@500", "p3@500"]
    assert [o["metadata"]["name"] for o in yaml.safe_load(out.read_text())["items"]] == ["a", "b", "c", "d"]


QUOTAS = "/api/v1/resourcequotas"
BUDGETS = "/apis/policy/v1/poddisruptionbudgets"


@pytest.mark.parametrize("path", [QUOTAS, BUDGETS])
def test_quotas_and_disruption_budgets_are_read_under_the_same_limits(cli, hostile, path):
    silent = cli("snapshot", "--kubeconfig", str(hostile(_silent, path, read_seconds=SILENT_FOR)))
    assert silent.code == 2
    assert f"the API server sent nothing for {SILENT_FOR} s while answering GET {path}" in silent.err
    malformed = cli("snapshot", "--kubeconfig", str(hostile(_replying({"items": {"a": 1}}), path)))
    assert malformed.code == 2 and f"the reply to GET {path} has items that are an object, not a list" in malformed.err
    paging = cli("snapshot", "--kubeconfig", str(hostile(_continue_forever, path)))
    assert paging.code == 2 and f"GET {path} did not end after 50 pages" in paging.err


def test_a_cluster_without_policy_v1_has_no_disruption_budgets(cli, hostile, tmp_path):
    """Kubernetes before 1.21 serves no policy/v1: no budgets, as for a Volcano CRD not installed."""
    out = tmp_path / "cluster.yaml"
    result = cli("snapshot", "--kubeconfig", str(hostile(_replying({"kind": "Status", "code": 404}, 404), BUDGETS)),
                 "-o", str(out))
    assert result.code == 0, result.err
    assert yaml.safe_load(out.read_text())["items"] == []
