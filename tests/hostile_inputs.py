"""Malformed cluster documents for the robustness tests and the fuzzers: one small cluster
that touches every field fumarole reads, and systematic ways of breaking it.

``corpus()`` is the fixed set the serve test posts (each body once); ``mutate`` is what the
hypothesis tests and ``benchmarks/fuzz_inputs.py`` draw from at random.
"""

from __future__ import annotations

import codecs
import copy
import json
from typing import Any, Iterator

import yaml

# One of each kind, with the fields the model and the Kubernetes filters read.
BASE: list[dict] = [
    {"apiVersion": "v1", "kind": "Node",
     "metadata": {"name": "n1", "labels": {"zone": "z1", "kubernetes.io/hostname": "n1"}},
     "spec": {"taints": [{"key": "gpu", "value": "true", "effect": "PreferNoSchedule"}], "unschedulable": False},
     "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                "images": [{"names": ["busybox:1"], "sizeBytes": 1000}]}},
    {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
     "metadata": {"name": "default"}, "spec": {"weight": 1, "reclaimable": True, "capability": {"cpu": "8"}},
     "status": {"state": "Open"}},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 100},
    {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
     "metadata": {"name": "pg", "namespace": "ns"},
     "spec": {"queue": "default", "minMember": 1, "minResources": {"cpu": "1"}, "priorityClassName": "high"},
     "status": {"phase": "Pending"}},
    {"apiVersion": "v1", "kind": "Pod",
     "metadata": {"name": "p", "namespace": "ns", "uid": "ns-p", "labels": {"app": "a"},
                  "annotations": {"scheduling.k8s.io/group-name": "pg"}},
     "spec": {"priority": 100, "nodeSelector": {"zone": "z1"},
              "containers": [{"image": "busybox:1", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                              "ports": [{"hostPort": 8080, "protocol": "TCP"}]}],
              "initContainers": [{"resources": {"requests": {"cpu": "500m"}}}],
              "overhead": {"cpu": "100m"},
              "tolerations": [{"key": "gpu", "operator": "Exists"}],
              "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                  "nodeSelectorTerms": [{"matchExpressions": [
                      {"key": "zone", "operator": "In", "values": ["z1"]}]}]}}},
              "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                             "whenUnsatisfiable": "ScheduleAnyway",
                                             "labelSelector": {"matchLabels": {"app": "a"}}}]},
     "status": {"phase": "Pending"}},
]

# Values that have broken parsers before: wrong types, huge or odd numbers, odd text.
HOSTILE_VALUES: list[Any] = [
    None, True, -1, 0, 2**63, 10**30, 1.5, 1e308, "", "x", "1e999999999", "1e400", "1" * 5_000,
    "١٢", "-5", "2026-13-45T00:00:00Z", "\x00", "é" * 3, [], {}, ["a"], {"a": 1}, [[["deep"]]],
    {"cpu": "1e999999999"}, [{"key": 5}], "${x}", "{2}",
]


def paths(value: Any, prefix: tuple = ()) -> Iterator[tuple]:
    """Every place in ``value`` (each mapping value and list item, at every depth)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield prefix + (key,)
            yield from paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield prefix + (index,)
            yield from paths(item, prefix + (index,))


ALL_PATHS: list[tuple] = list(paths(BASE))


def _copy_and_owner(objects: list, path: tuple) -> tuple[list, Any]:
    """A deep copy of ``objects`` and, in it, the container holding ``path``'s last step."""
    out = copy.deepcopy(objects)
    owner: Any = out
    for part in path[:-1]:
        owner = owner[part]
    return out, owner


def replaced(objects: list, path: tuple, value: Any) -> list:
    """A deep copy of ``objects`` with the value at ``path`` replaced."""
    out, owner = _copy_and_owner(objects, path)
    owner[path[-1]] = copy.deepcopy(value)
    return out


def removed(objects: list, path: tuple) -> list:
    """A deep copy of ``objects`` without the value at ``path``."""
    out, owner = _copy_and_owner(objects, path)
    del owner[path[-1]]
    return out


def as_yaml(objects: list) -> bytes:
    return yaml.safe_dump_all(objects, allow_unicode=True).encode()


def as_json(objects: list) -> bytes:
    return json.dumps(objects, ensure_ascii=False).encode()


def raw_bodies() -> list[tuple[str, bytes, str]]:
    """(label, body, content type): malformed at the byte or syntax level."""
    good = as_yaml(BASE)
    node = "apiVersion: v1\nkind: Node\nmetadata: {name: n9}\nstatus: {allocatable: {cpu: '1'}}\n"
    bomb = "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
        f"{n}: &{n} [{', '.join([f'*{p}'] * 10)}]\n" for p, n in zip("abcdefgh", "bcdefghi"))
    out = [
        ("deep flow 100k", b"items: " + b"[" * 100_000 + b"]" * 100_000, "application/yaml"),
        ("deep flow 5k", b"items: " + b"[" * 5_000, "application/yaml"),
        ("deep block", "".join("  " * i + "- \n" for i in range(3_000)).encode(), "application/yaml"),
        ("deep compact", b"- " * 20_000 + b"1", "application/yaml"),
        ("deep mapping", b"a: {" * 50_000, "application/yaml"),
        ("deep json 100k", b"[" * 100_000 + b"]" * 100_000, "application/json"),
        ("deep json 500", b"[" * 500 + b"]" * 500, "application/json"),
        ("deep json object", b'{"a":' * 5_000 + b"1" + b"}" * 5_000, "application/json"),
        ("billion laughs", bomb.encode(), "application/yaml"),
        ("recursive alias", b"a: &a [*a]", "application/yaml"),
        ("undefined alias", b"a: *nope", "application/yaml"),
        ("duplicate keys", node.replace("name: n9", "name: n9, name: n8").encode(), "application/yaml"),
        ("python tag", b"!!python/object/apply:os.system [id]", "application/yaml"),
        ("set tag", b"!!set {a, b}", "application/yaml"),
        ("binary tag", node.replace("n9", "!!binary aGVsbG8=").encode(), "application/yaml"),
        ("bad timestamp", node.replace("{name: n9}", "{name: n9, creationTimestamp: 2026-13-45}").encode(),
         "application/yaml"),
        ("huge int", node.replace("'1'", "1" * 5_000).encode(), "application/yaml"),
        ("huge json int", b'[{"kind": "Node", "metadata": {"name": "n"}, "value": ' + b"1" * 5_000 + b"}]",
         "application/json"),
        ("quantity 1e999999999", node.replace("'1'", "'1e999999999'").encode(), "application/yaml"),
        ("quantity 1e99999999999", node.replace("'1'", "'1e99999999999'").encode(), "application/yaml"),
        ("quantity arabic digits", node.replace("'1'", "'١٢'").encode(), "application/yaml"),
        ("utf-16", codecs.BOM_UTF16_LE + node.encode("utf-16-le"), "application/yaml"),
        ("utf-16 json", codecs.BOM_UTF16_BE + as_json(BASE).decode().encode("utf-16-be"), "application/json"),
        ("binary", bytes(range(256)), "application/yaml"),
        ("nul bytes", b"\x00" * 100, "application/yaml"),
        ("lone surrogate", b"a: \xed\xa0\x80", "application/yaml"),
        ("empty", b"", "application/yaml"),
        ("empty json", b"", "application/json"),
        ("json scalar", b"5", "application/json"),
        ("json string", b'"x"', "application/json"),
        ("json null", b"null", "application/json"),
        ("json NaN", b'[{"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": NaN}}}]',
         "application/json"),
        ("yaml as json", good, "application/json"),
        ("tabs", b"a:\t[\t1]\n\tb: 2", "application/yaml"),
        ("two documents, second broken", good + b"---\n[", "application/yaml"),
        ("list items 5", b"apiVersion: v1\nkind: List\nitems: 5\n", "application/yaml"),
        ("nested lists", b"kind: List\nitems: [{kind: List, items: [{kind: List, items: {}}]}]\n",
         "application/yaml"),
        ("kind 5", b"kind: 5\nmetadata: {name: x}\n", "application/yaml"),
        ("kind list", b"kind: [Node]\nmetadata: {name: x}\n", "application/yaml"),
        ("pod group status x", b"kind: PodGroup\nmetadata: {name: pg}\nstatus: x\n", "application/yaml"),
        ("name list", b"kind: Node\nmetadata: {name: [a]}\n", "application/yaml"),
        ("name map", b"kind: Node\nmetadata: {name: {a: 1}}\n", "application/yaml"),
        ("overhead x", b"kind: Pod\nmetadata: {name: p}\nspec: {overhead: x}\n", "application/yaml"),
        ("truncated", good[: len(good) // 2], "application/yaml"),
    ]
    return out


def corpus() -> list[tuple[str, bytes, str]]:
    """Raw bodies, plus every place of BASE broken in turn (values rotate through HOSTILE_VALUES),
    alternately as YAML and JSON, plus each object with each top-level field removed."""
    out = raw_bodies()
    for index, path in enumerate(ALL_PATHS):
        for turn, pick in enumerate((index, index * 7 + 3)):
            value = HOSTILE_VALUES[pick % len(HOSTILE_VALUES)]
            encode, kind = (as_yaml, "application/yaml") if (index + turn) % 2 == 0 else (as_json, "application/json")
            out.append((f"{path} = {value!r:.30}", encode(replaced(BASE, path, value)), kind))
    for index, path in enumerate(p for p in ALL_PATHS if len(p) == 2):
        out.append((f"without {path}", as_yaml(removed(BASE, path)), "application/yaml"))
    return out
