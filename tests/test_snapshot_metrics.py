"""A snapshot reads node metrics from the source the scheduler's ConfigMap names (Prometheus, the
custom metrics API, Elasticsearch), as Volcano's scheduler does, and a source that fails costs a
warning, never the snapshot."""

from __future__ import annotations

import base64
import json
from urllib.parse import parse_qs, urlparse

import pytest
import yaml
from fumarole.runtime.ingest import node_metrics_source as source
from fumarole.runtime.ingest import snapshot
from hypothesis import given, settings
from hypothesis import strategies as st
from loopback_api import CONFIGMAP, JsonHandler, loopback_server, write_kubeconfig

STAMP = "2026-11-21T12:00:00Z"
NOW = "2026-11-21T12:01:00Z"  # a minute after the metrics: fresh for the usage plugin
CONF = """actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: proportion
  - name: usage
metrics:
"""


def _node(name: str) -> dict:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}


OBJECTS = {
    "/api/v1/nodes": [_node("n1"), _node("n2")],
    "/apis/scheduling.volcano.sh/v1beta1/queues": [{"metadata": {"name": "default"}, "spec": {"weight": 1},
                                                    "status": {"state": "Open"}}],
    "/apis/scheduling.volcano.sh/v1beta1/podgroups": [
        {"metadata": {"name": "job", "namespace": "d"}, "spec": {"queue": "default", "minMember": 1},
         "status": {"phase": "Inqueue"}}],
    "/api/v1/pods": [
        {"metadata": {"name": "p", "namespace": "d", "annotations": {"scheduling.k8s.io/group-name": "job"}},
         "spec": {"schedulerName": "volcano",
                  "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]},
         "status": {"phase": "Pending"}}],
}


LISTS = {snapshot._list_path(api_version, plural) for api_version, _, plural in snapshot.KINDS}


class _Cluster(JsonHandler):
    """The API server, serving the scheduler configuration ``metrics`` and, as the custom metrics
    API, ``custom`` (metric name -> node -> value) when it is set."""

    metrics = "{type: prometheus_adaptor}"
    custom: dict[str, dict[str, str]] | None = None
    custom_status = 200
    asked: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = urlparse(self.path).path
        self.asked.append(path)
        if path in LISTS:
            self.send_json(200, {"kind": "List", "metadata": {}, "items": OBJECTS.get(path, [])})
        elif path == CONFIGMAP:
            self.send_json(200, {"data": {"volcano-scheduler.conf": CONF + f"  {self.metrics}\n"}})
        elif path.startswith("/apis/custom.metrics.k8s.io/v1beta2/nodes/*/") and self.custom is not None:
            if self.custom_status != 200:
                self.send_json(self.custom_status, {"kind": "Status", "code": self.custom_status})
                return
            name = path.rsplit("/", 1)[1]
            self.send_json(200, {"kind": "MetricValueList", "items": [
                {"describedObject": {"kind": "Node", "name": node, "apiVersion": "/v1"},
                 "metric": {"name": name}, "timestamp": STAMP, "value": value}
                for node, value in self.custom.get(name, {}).items()]})
        else:
            self.send_json(404, {"kind": "Status", "code": 404})


class _Prometheus(JsonHandler):
    cpu = {"n1": "93.5", "n2": "12"}
    queries: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        url = urlparse(self.path)
        query = parse_qs(url.query)["query"][0]
        self.queries.append(query)
        node = query.split('instance="')[1].split('"')[0]
        value = self.cpu.get(node) if "node_cpu_seconds_total" in query else "40"
        result = [] if value is None else [{"metric": {"instance": node}, "value": [1.7e9, value]}]
        self.send_json(200, {"status": "success", "data": {"resultType": "vector", "result": result}})


class _Elasticsearch(JsonHandler):
    seen: list[tuple[str, str, dict]] = []

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append((self.path, self.headers.get("Authorization", ""), body))
        node = body["query"]["bool"]["must"][1]["term"]["host.hostname"]
        self.send_json(200, {"aggregations": {"cpu": {"value": 0.91 if node == "n1" else 0.2},
                                              "mem": {"value": None}}})


@pytest.fixture
def cluster():
    _Cluster.asked, _Cluster.custom, _Cluster.custom_status = [], None, 200
    with loopback_server(_Cluster) as server:
        yield server


def _snapshot(cli, tmp_path, cluster, metrics: str):
    _Cluster.metrics = metrics
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", cluster.server_address[1])
    out = tmp_path / "cluster.yaml"
    result = cli("snapshot", "--kubeconfig", str(kubeconfig), "-o", str(out))
    assert result.code == 0, result.err
    nodes = {o["metadata"]["name"]: o.get("metrics") for o in yaml.safe_load(out.read_text())["items"]
             if o["kind"] == "Node"}
    return nodes, result.err, kubeconfig


def test_the_custom_metrics_api_gives_each_node_its_averages_and_time(cli, tmp_path, cluster):
    _Cluster.custom = {"node_cpu_usage_avg": {"n1": "950m", "n2": "100m", "elsewhere": "1"},
                       "node_memory_usage_avg": {"n1": "500m"}}
    nodes, err, _ = _snapshot(cli, tmp_path, cluster, "{type: prometheus_adaptor}")
    assert nodes == {"n1": {"time": STAMP, "cpu": {"10m": 95.0}, "memory": {"10m": 50.0}},
                     "n2": {"time": STAMP, "cpu": {"10m": 10.0}, "memory": {"10m": 0.0}}}
    assert "warning" not in err


def test_run_on_the_live_cluster_reads_the_metrics_the_usage_plugin_filters_by(cli, tmp_path, cluster):
    """n1 is busier than the usage plugin's 80 % threshold: the pod goes to n2; and the other way round."""
    _Cluster.metrics = "{type: prometheus_adaptor}"
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", cluster.server_address[1])
    for busy, free in (("n1", "n2"), ("n2", "n1")):
        _Cluster.custom = {"node_cpu_usage_avg": {busy: "900m", free: "100m"}}
        live = cli("run", "--kubeconfig", str(kubeconfig), "--now", NOW, "-o", "json")
        assert live.code == 0, live.err
        assert json.loads(live.out)["binds"] == {"d/p": free}


def test_prometheus_is_asked_volcanos_two_queries_per_node(cli, tmp_path, cluster):
    _Prometheus.queries = []
    with loopback_server(_Prometheus) as prometheus:
        address = f"http://127.0.0.1:{prometheus.server_address[1]}"
        _Prometheus.cpu = {"n1": "93.5"}  # n2 has no CPU data: 0, as Volcano reads it
        nodes, err, _ = _snapshot(cli, tmp_path, cluster, f"{{type: prometheus, address: '{address}'}}")
    assert {name: (m["cpu"], m["memory"]) for name, m in nodes.items()} == {
        "n1": ({"10m": 93.5}, {"10m": 40.0}), "n2": ({"10m": 0.0}, {"10m": 40.0})}
    assert all(m["time"].endswith("Z") for m in nodes.values())
    assert len(_Prometheus.queries) == 4 and 'node_cpu_seconds_total{mode="idle",instance="n1"}[5m]' in _Prometheus.queries[0]
    assert _Prometheus.queries[1] == ('100*avg_over_time(((1-node_memory_MemAvailable_bytes{instance="n1"}'
                                      '/node_memory_MemTotal_bytes{instance="n1"}))[10m:30s])')
    assert "warning" not in err


def test_elasticsearch_is_searched_per_node_with_its_index_and_credentials(cli, tmp_path, cluster):
    _Elasticsearch.seen = []
    with loopback_server(_Elasticsearch) as search:
        address = f"http://127.0.0.1:{search.server_address[1]}"
        nodes, err, _ = _snapshot(cli, tmp_path, cluster, (
            f"{{type: elasticsearch, address: '{address}', elasticsearch.index: 'nodes-*', "
            "elasticsearch.username: u, elasticsearch.password: pw}"))
    assert {name: (m["cpu"], m["memory"]) for name, m in nodes.items()} == {
        "n1": ({"10m": 91.0}, {"10m": 0.0}), "n2": ({"10m": 20.0}, {"10m": 0.0})}
    path, auth, body = _Elasticsearch.seen[0]
    assert path == "/nodes-*/_search" and auth == "Basic " + base64.b64encode(b"u:pw").decode()
    assert body["query"]["bool"]["must"][0] == {"range": {"@timestamp": {"gte": "now-10m", "lt": "now"}}}
    assert body["aggs"] == {"cpu": {"avg": {"field": "host.cpu.usage"}},
                            "mem": {"avg": {"field": "system.memory.actual.used.pct"}}}


def test_a_source_that_fails_costs_a_warning_not_the_snapshot(cli, tmp_path, cluster):
    # Prometheus unreachable: every figure 0 and the time of asking, as Volcano's client leaves them.
    nodes, err, kubeconfig = _snapshot(cli, tmp_path, cluster, "{type: prometheus, address: 'http://127.0.0.1:9'}")
    assert {name: (m["cpu"], m["memory"]) for name, m in nodes.items()} == {
        "n1": ({"10m": 0.0}, {"10m": 0.0}), "n2": ({"10m": 0.0}, {"10m": 0.0})}
    assert f"{kubeconfig}: warning: 4 of 4 Prometheus queries failed (cannot reach the metrics source " \
           "http://127.0.0.1:9" in err and "those figures read 0, as Volcano's do" in err
    # The custom metrics API refuses: no metrics at all.
    _Cluster.custom, _Cluster.custom_status = {}, 403
    nodes, err, kubeconfig = _snapshot(cli, tmp_path, cluster, "{type: prometheus_adaptor}")
    assert nodes == {"n1": None, "n2": None}
    assert f"{kubeconfig}: warning: the custom metrics API gave no node metrics (the API server answered 403 " \
           "to GET /apis/custom.metrics.k8s.io/v1beta2/nodes/*/node_cpu_usage_avg): none, as in Volcano" in err
    nodes, err, _ = _snapshot(cli, tmp_path, cluster, "{type: graphite, address: x}")
    assert nodes == {"n1": None, "n2": None} and "metrics type 'graphite' is none of elasticsearch" in err
    nodes, err, _ = _snapshot(cli, tmp_path, cluster, "{type: prometheus}")
    assert nodes == {"n1": None, "n2": None} and "metrics type prometheus has no address" in err


def test_without_a_metrics_type_nothing_is_asked(cli, tmp_path, cluster):
    nodes, err, _ = _snapshot(cli, tmp_path, cluster, "{address: 'http://127.0.0.1:9'}")
    assert nodes == {"n1": None, "n2": None} and "warning" not in err
    assert not [p for p in _Cluster.asked if "custom.metrics" in p]


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=3),
                    max_leaves=12)
REPLY = JSON | st.fixed_dictionaries({"data": st.fixed_dictionaries(
    {"resultType": st.just("vector"), "result": st.lists(st.fixed_dictionaries({"value": JSON}), max_size=2)})})


@settings(max_examples=150, deadline=None)
@given(REPLY, st.sampled_from(["prometheus", "adaptor", "elasticsearch"]))
def test_any_reply_is_figures_or_a_note(reply, kind):
    """Whatever a source answers, the snapshot gets finite figures or a note saying why none."""
    def send(*request):
        return reply
    conf = {"prometheus": {"type": "prometheus", "address": "http://x"}, "adaptor": {"type": "prometheus_adaptor"},
            "elasticsearch": {"type": "elasticsearch", "address": "http://x"}}[kind]
    reading = source.read(conf, ["n1"], send, clock=lambda: 1.7e9)
    for block in reading.blocks.values():
        for figures in (block["cpu"], block["memory"]):
            assert all(isinstance(v, float) and v == v and abs(v) != float("inf") for v in figures.values())
    assert reading.blocks or reading.notes or kind == "adaptor"


@pytest.mark.parametrize("sample", ["1_000", " 12", "٣", "NaN", "+Inf", "1e400", ""])
def test_a_sample_go_would_not_read_as_a_finite_number_is_a_failed_query(sample):
    """Volcano ignores ParseFloat's error and keeps 0; so does the snapshot, and it says so."""
    def send(*request):
        return {"data": {"resultType": "vector", "result": [{"value": [1.7e9, sample]}]}}
    reading = source.read({"type": "prometheus", "address": "http://x"}, ["n1"], send, clock=lambda: 1.7e9)
    assert (reading.blocks["n1"]["cpu"], reading.blocks["n1"]["memory"]) == ({"10m": 0.0}, {"10m": 0.0})
    assert reading.notes[0].startswith("2 of 2 Prometheus queries failed (a Prometheus sample ")
