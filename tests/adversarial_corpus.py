"""The adversarial corpus: hostile inputs that broke earlier versions, each with the answer it must get.

Each case is sent to its front door -- ``fumarole run`` on a cluster file, or
a live ``fumarole serve`` (loopback, admin without a token: the default) --
and must get its expected status or exit code and diagnostic within its time
bound.  ``tests/test_adversarial_corpus.py`` runs every case; run this file
to print the table::

    python tests/adversarial_corpus.py
"""

from __future__ import annotations

import io
import json
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from serving_helpers import archive, cluster_text, make_service, namespaces, running, write_bundle  # noqa: E402
from test_extender import N1, T2  # noqa: E402

from fumarole.runtime.serve.server import Options  # noqa: E402

LONG_NAME = "a" * 50_000


def _hyper_node_cluster(pattern: str, names: tuple[str, ...] = (LONG_NAME + "!", LONG_NAME)) -> str:
    nodes = [f"apiVersion: v1\nkind: Node\nmetadata: {{name: {n}}}\n"
             "status: {allocatable: {cpu: '2', memory: 4Gi, pods: '10'}}" for n in names]
    hyper = ("apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: r}\nspec:\n  tier: 1\n"
             f"  members:\n  - {{type: Node, selector: {{regexMatch: {{pattern: '{pattern}'}}}}}}")
    return "\n---\n".join(nodes + [hyper]) + "\n"


@dataclass(frozen=True)
class Case:
    """One hostile input: where it goes, what it is, what it must get."""

    name: str
    door: str  # "run", or an HTTP method and path of the service
    body: Callable[[], bytes | str] = lambda: b""
    headers: dict = field(default_factory=dict)
    status: int = 0  # the HTTP status, or run's exit code
    expect: str = ""  # a text the answer (or run's output) must contain
    seconds: float = 10.0


CORPUS: tuple[Case, ...] = (
    Case("catastrophic HyperNode pattern, run", "run", lambda: _hyper_node_cluster("^(a+)+$"), status=0),
    Case("catastrophic HyperNode pattern, session", "POST /v1/sessions", lambda: _hyper_node_cluster("^(a+)+$"),
         status=200, expect='"decisions"'),
    Case("pattern Go refuses", "run", lambda: _hyper_node_cluster("(", ("n1",)), status=2,
         expect="cluster.yaml:12:51: error[K004]: HyperNode r spec.members[0].selector.regexMatch.pattern is not a "
         "regular expression Volcano accepts: missing ): ("),
    Case("pattern over 1,024 characters", "run", lambda: _hyper_node_cluster("a" * 2000, ("n1",)), status=2,
         expect="the pattern is 2000 characters long; fumarole accepts at most 1024"),
    Case("a million empty YAML documents", "POST /v1/sessions", lambda: b"--- {}\n" * 1_000_000,
         status=400, expect="more than 100,000 YAML documents in one body"),
    Case("JSON nested 200,000 deep", "POST /v1/sessions", lambda: "[" * 200_000,
         {"content-type": "application/json"}, 400, "nested deeper than 100 levels"),
    Case("JSON with a duplicate key", "POST /v1/sessions", lambda: '{"kind": "Pod", "kind": "Node"}',
         {"content-type": "application/json"}, 400, "duplicate key 'kind' (first at line 1, column 2)"),
    Case("a body that is not UTF-8", "POST /v1/sessions", lambda: b"kind: Node\n\xff\xfe", status=400,
         expect="error[K001]"),
    Case("now= past the year 9999", "POST /v1/sessions?now=99999-01-01T00:00:00Z", cluster_text, status=400,
         expect="is not an RFC 3339 time"),
    Case("megabyte names are not retained", "POST /v1/sessions",
         lambda: cluster_text().replace("name: ", "name: " + "x" * 2_000_000, 1), status=200, expect='"id"'),
    Case("extender: JSON nested 200,000 deep", "POST /v1/extender/predicate", lambda: "[" * 200_000,
         status=400, expect="nested deeper than 100 levels"),
    Case("extender: duplicate keys", "POST /v1/extender/predicate", lambda: '{"task": {}, "task": {}}',
         status=400, expect="duplicate key 'task'"),
    Case("extender: a node named unlike its Node", "POST /v1/extender/predicate",
         lambda: json.dumps({"task": T2, "node": {**N1, "Name": "elsewhere"}}), status=400,
         expect="node.Name 'elsewhere' is not the name of node.Node ('node-1')"),
    Case("extender: a list for a struct", "POST /v1/extender/prioritize", lambda: "[]", status=400,
         expect="the request body must be a JSON object"),
    Case("extender: an unknown verb", "POST /v1/extender/filter", status=404, expect="unknown extender verb"),
    Case("rollback from a web page", "POST /v1/bundles/rollback",
         headers={"origin": "http://evil.example", "content-type": "text/plain"}, status=403,
         expect="admin endpoints refuse requests from web pages"),
    Case("rollback as a simple request", "POST /v1/bundles/rollback", headers={"content-type": "text/plain"},
         status=415, expect="need a Content-Type a web page cannot send unasked"),
    Case("activation from another site", "PUT /v1/bundles/active",
         headers={"sec-fetch-site": "cross-site", "content-type": "application/gzip"}, status=403,
         expect="Sec-Fetch-Site is 'cross-site'"),
    Case("decisions since a word", "GET /v1/decisions?since=abc", status=400, expect="must be integers"),
)


@dataclass(frozen=True)
class Outcome:
    case: Case
    status: int
    answer: str
    seconds: float

    @property
    def ok(self) -> bool:
        return (self.status == self.case.status and self.case.expect in self.answer
                and self.seconds < self.case.seconds)


def _run(case: Case, folder: Path) -> tuple[int, str]:
    from fumarole.runtime.cli.main import main

    cluster = folder / "cluster.yaml"
    body = case.body()
    cluster.write_text(body if isinstance(body, str) else body.decode())
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["run", str(cluster)])
    return code, (out.getvalue() + err.getvalue()).replace(str(folder) + "/", "")


def run_corpus(cases: tuple[Case, ...] = CORPUS) -> list[Outcome]:
    """Every case against its front door; one service (loopback, no admin token) for the HTTP ones."""
    outcomes = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        service = make_service(archive(write_bundle(folder / "bundle", "1", namespaces())))
        service.session_timeout = 30
        with running(service, Options(admin_token=None)) as url, httpx.Client(base_url=url, timeout=60) as client:
            for case in cases:
                started = time.monotonic()
                if case.door == "run":
                    status, answer = _run(case, folder)
                else:
                    method, path = case.door.split(" ", 1)
                    body = case.body()
                    response = client.request(method, path, content=body.encode() if isinstance(body, str) else body,
                                              headers=case.headers)
                    status, answer = response.status_code, response.text
                outcomes.append(Outcome(case, status, answer, time.monotonic() - started))
    return outcomes


if __name__ == "__main__":
    results = run_corpus()
    print(f"{'case':45} {'door':32} {'got':>4} {'want':>4} {'seconds':>8}  ok")
    for result in results:
        print(f"{result.case.name:45} {result.case.door[:32]:32} {result.status:>4} {result.case.status:>4} "
              f"{result.seconds:8.2f}  {'yes' if result.ok else 'NO: ' + result.answer[:120]}")
    sys.exit(0 if all(r.ok for r in results) else 1)
