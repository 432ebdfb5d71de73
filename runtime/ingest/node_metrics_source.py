"""Node metrics for a snapshot, read from the metrics source Volcano's scheduler ConfigMap names.

Volcano's scheduler fills each node's ``ResourceUsage`` (the 10-minute CPU and memory averages
the usage plugin filters and scores by) from the source its configuration's ``metrics`` block
names (``pkg/scheduler/metrics/source``).  A snapshot asks the same source the same questions
and writes the answers as each Node's ``metrics`` block (docs/scenarios.md), so a dump decides
as the scheduler would have at that moment:

- ``prometheus``: two instant queries per node at ``address`` (``/api/v1/query``), the first
  row of each vector; a query that fails or finds nothing leaves that figure 0, and the node's
  time is the time it was asked, as Volcano's client does.
- ``prometheus_adaptor``: the custom metrics API through the API server,
  ``node_cpu_usage_avg`` and ``node_memory_usage_avg`` for every node (fractions, times 100),
  each node timed as its value; any failure means no metrics at all, as in Volcano.
- ``elasticsearch``: one search per node at ``address`` (index ``elasticsearch.index``,
  default ``metricbeat-*``), averages of ``host.cpu.usage`` and
  ``system.memory.actual.used.pct`` over the last 10 minutes, times 100; any failure means no
  metrics at all.

The requests go through the snapshot's own hardened client (timeouts, size caps, shape checks);
this module says what to ask and how to read the answers, and why a source gave nothing
(:attr:`Reading.notes`, which the command prints: Volcano would only have logged them).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import quote

from fumarole.runtime.api.quantity import QuantityError, parse_quantity

PERIOD = "10m"  # NODE_METRICS_PERIOD: the one window Volcano collects
PROMETHEUS, ADAPTOR, ELASTICSEARCH = "prometheus", "prometheus_adaptor", "elasticsearch"
CUSTOM_METRICS = ("/apis/custom.metrics.k8s.io/v1beta2", "/apis/custom.metrics.k8s.io/v1beta1")
ADAPTOR_NAMES = {"node_cpu_usage_avg": "cpu", "node_memory_usage_avg": "memory"}
ES_CPU, ES_MEMORY, ES_HOSTNAME, ES_INDEX = "host.cpu.usage", "system.memory.actual.used.pct", "host.hostname", "metricbeat-*"
WALL_SECONDS = 60.0  # Volcano gives one collection a minute in all


class Unavailable(Exception):
    """A request the source did not answer (transport, status or shape), said for the user."""


# (method, host or None for the API server, path, query, body, headers) -> the JSON reply; raises
# Unavailable.  The host is the configuration's address for prometheus and elasticsearch.
Send = Callable[[str, "str | None", str, "dict[str, Any] | None", "bytes | None", "dict[str, str]"], Any]


@dataclass
class Reading:
    """Each node's metrics block, and why a source gave less than asked."""

    blocks: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def settings_of(conf_text: str | None) -> dict[str, str]:
    """The configuration's ``metrics`` block as Volcano's ``map[string]string`` (empty without one;
    a configuration that does not parse is reported when it is run, not here)."""
    import yaml

    if not conf_text:
        return {}
    try:
        doc = yaml.safe_load(conf_text)
    except yaml.YAMLError:
        return {}
    metrics = doc.get("metrics") if isinstance(doc, dict) else None
    if not isinstance(metrics, dict):
        return {}
    return {str(k): "" if v is None else str(v).lower() if isinstance(v, bool) else str(v) for k, v in metrics.items()}


def read(settings: dict[str, str], nodes: list[str], send: Send, clock: Callable[[], float] = time.time) -> Reading:
    """Ask the configured source for every node's averages (no ``type``: no metrics, as Volcano)."""
    kind = settings.get("type", "")
    reading = Reading()
    if not kind or not nodes:
        return reading
    if kind not in (PROMETHEUS, ADAPTOR, ELASTICSEARCH):
        reading.notes.append(f"metrics type {kind!r} is none of {ELASTICSEARCH}, {PROMETHEUS}, {ADAPTOR}: "
                             "no node metrics, as Volcano collects none")
        return reading
    if kind != ADAPTOR and not settings.get("address"):
        reading.notes.append(f"metrics type {kind} has no address: no node metrics, as Volcano collects none")
        return reading
    deadline = time.monotonic() + WALL_SECONDS
    timed = _within(send, deadline)
    if kind == PROMETHEUS:
        _prometheus(settings["address"], nodes, timed, clock, reading)
    elif kind == ADAPTOR:
        _adaptor(nodes, timed, reading)
    else:
        _elasticsearch(settings, nodes, timed, clock, reading)
    return reading


def _within(send: Send, deadline: float) -> Send:
    def timed(*request: Any) -> Any:
        if time.monotonic() > deadline:
            raise Unavailable(f"the metrics collection took longer than {WALL_SECONDS:g} s")
        return send(*request)
    return timed


def _block(at: float, cpu: float, memory: float) -> dict[str, Any]:
    stamp = _dt.datetime.fromtimestamp(at, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"time": stamp, "cpu": {PERIOD: cpu}, "memory": {PERIOD: memory}}


def _prometheus(address: str, nodes: list[str], send: Send, clock: Callable[[], float], reading: Reading) -> None:
    failed: list[str] = []
    for node in nodes:
        # Volcano's two queries, with the node name as the instance label.
        cpu_query = ('avg_over_time(clamp_min(100 - (avg by (instance) (rate(node_cpu_seconds_total{mode="idle",'
                     f'instance="{node}"}}[5m])) * 100), 0)[{PERIOD}:30s])')
        memory_query = (f'100*avg_over_time(((1-node_memory_MemAvailable_bytes{{instance="{node}"}}'
                        f'/node_memory_MemTotal_bytes{{instance="{node}"}}))[{PERIOD}:30s])')
        figures = []
        for query in (cpu_query, memory_query):
            try:
                figures.append(_first_sample(send("GET", address, "/api/v1/query", {"query": query}, None, {})))
            except Unavailable as why:
                failed.append(str(why))
                figures.append(0.0)
        reading.blocks[node] = _block(clock(), figures[0], figures[1])
    if failed:
        reading.notes.append(f"{len(failed):,} of {2 * len(nodes):,} Prometheus queries failed ({failed[0]}); "
                             "those figures read 0, as Volcano's do")


def _first_sample(reply: Any) -> float:
    """The first row's value of a vector result; 0 for anything else (no data, a matrix, a scalar)."""
    data = reply.get("data") if isinstance(reply, dict) else None
    if not isinstance(data, dict) or data.get("resultType") != "vector":
        return 0.0
    rows = data.get("result")
    if not isinstance(rows, list) or not rows or not isinstance(rows[0], dict):
        return 0.0
    value = rows[0].get("value")
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[1], str)):
        raise Unavailable("a vector sample is not [time, \"value\"]")
    return _finite(value[1], "a Prometheus sample")


# A decimal number as Go's strconv.ParseFloat reads one; Python's float() also takes spaces,
# underscores and non-ASCII digits, which Go refuses (and Volcano then reads as 0).
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|infinity|nan)", re.ASCII | re.IGNORECASE)


def _finite(text: str, what: str) -> float:
    if not _DECIMAL.fullmatch(text):
        raise Unavailable(f"{what} {text[:40]!r} is not a number")
    number = float(text)
    if not math.isfinite(number):
        raise Unavailable(f"{what} is {text[:40]!r}, not a finite number")
    return number


def _adaptor(nodes: list[str], send: Send, reading: Reading) -> None:
    known = set(nodes)
    found: dict[str, dict[str, Any]] = {}
    try:
        for name, figure in ADAPTOR_NAMES.items():
            for item in _custom_metric_items(name, send):
                node = item["describedObject"]["name"]
                if node not in known:
                    continue
                entry = found.setdefault(node, {"time": 0.0, "cpu": 0.0, "memory": 0.0})
                entry["time"] = item["at"]
                entry[figure] = item["value"] * 100
    except Unavailable as why:
        reading.notes.append(f"the custom metrics API gave no node metrics ({why}): none, as in Volcano")
        return
    for node, entry in found.items():
        reading.blocks[node] = _block(entry["time"], entry["cpu"], entry["memory"])


def _custom_metric_items(name: str, send: Send) -> list[dict[str, Any]]:
    """Every node's value of one custom metric, from the first API version the server serves."""
    for version in CUSTOM_METRICS:
        reply = send("GET", None, f"{version}/nodes/*/{quote(name)}", None, None, {})
        if reply is not None:
            break
    else:
        raise Unavailable(f"the API server serves no custom metric {name} (custom.metrics.k8s.io)")
    items = reply.get("items") if isinstance(reply, dict) else None
    if not isinstance(items, list):
        raise Unavailable(f"the {name} reply has no items list")
    out = []
    for item in items:
        described = item.get("describedObject") if isinstance(item, dict) else None
        if not (isinstance(described, dict) and isinstance(described.get("name"), str)):
            raise Unavailable(f"a {name} item has no describedObject.name")
        try:
            at = _dt.datetime.fromisoformat(str(item.get("timestamp", "")).replace("Z", "+00:00")).timestamp()
            value = float(parse_quantity(item.get("value")))
        except (ValueError, QuantityError, OverflowError) as why:
            raise Unavailable(f"the {name} item for {described['name'][:40]!r} does not read: {why}") from None
        out.append({"describedObject": described, "at": at, "value": value})
    return out


def _elasticsearch(settings: dict[str, str], nodes: list[str], send: Send, clock: Callable[[], float],
                   reading: Reading) -> None:
    index = settings.get("elasticsearch.index") or ES_INDEX
    hostname = settings.get("elasticsearch.hostnameFieldName") or ES_HOSTNAME
    headers = {"Content-Type": "application/json"}
    user, password = settings.get("elasticsearch.username", ""), settings.get("elasticsearch.password", "")
    if user or password:
        import base64
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    blocks = {}
    try:
        for node in nodes:
            query = {"size": 0,
                     "query": {"bool": {"must": [{"range": {"@timestamp": {"gte": f"now-{PERIOD}", "lt": "now"}}},
                                                 {"term": {hostname: node}}]}},
                     "aggs": {"cpu": {"avg": {"field": ES_CPU}}, "mem": {"avg": {"field": ES_MEMORY}}}}
            reply = send("POST", settings["address"], f"/{quote(index, safe='*,')}/_search", None,
                         json.dumps(query).encode(), headers)
            cpu, memory = (_aggregate(reply, name) for name in ("cpu", "mem"))
            blocks[node] = _block(clock(), cpu * 100, memory * 100)
    except Unavailable as why:
        reading.notes.append(f"Elasticsearch gave no node metrics ({why}): none, as in Volcano")
        return
    reading.blocks.update(blocks)


def _aggregate(reply: Any, name: str) -> float:
    """An average aggregation's value (null, as for no documents, reads 0 as Go decodes it)."""
    aggregations = reply.get("aggregations") if isinstance(reply, dict) else None
    entry = aggregations.get(name) if isinstance(aggregations, dict) else None
    value = entry.get("value") if isinstance(entry, dict) else None
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise Unavailable(f"aggregation {name} is not a number")
    return float(value)
