"""The plugins that decide who may be evicted, admitted or placed together run from a
volcano-scheduler.conf exactly as Volcano's configuration names them, with their upstream
arguments; their decisions are checked by the scenarios under tests/conformance/cases/plugins.
Here: the configuration, the cluster objects they read, and the arithmetic they rely on."""

from __future__ import annotations

import json
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from fumarole.runtime.api.constraints import ResourceList
from fumarole.runtime.api.labels import parse_selector

# A site's configuration, as Volcano ships it: each plugin under its own name, its
# arguments spelt as the plugin reads them.
SITE_CONF = """actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
  - name: cdp
  - name: pdb
  - name: task-topology
    arguments:
      task-topology.weight: 10
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: resourcequota
  - name: nodegroup
    enableHierarchy: true
    arguments:
      strict: false
      enablePreferredOrder: true
  - name: nodeorder
  - name: binpack
"""

BAD_OBJECTS = """apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: b, namespace: d}
spec:
  selector: {matchLabels: [a]}
status:
  disruptionsAllowed: "one"
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: q, namespace: d}
status:
  hard: {cpu: lots}
"""


def test_a_conf_enabling_them_runs_unchanged(cli, tmp_path, root):
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(SITE_CONF)
    result = cli("run", str(root / "examples/cluster.yaml"), "--config", str(conf), "-o", "json")
    assert result.code == 0, result.err
    assert "binds" in json.loads(result.out)


def test_budgets_and_quotas_that_kubernetes_would_refuse_are_positioned_errors(cli, tmp_path):
    cluster = tmp_path / "c.yaml"
    cluster.write_text(BAD_OBJECTS)
    result = cli("run", str(cluster))
    assert result.code == 2
    assert f"{cluster}:5:27: error[K007]: spec.selector.matchLabels of PodDisruptionBudget b must be a mapping" \
        in result.err
    assert f"{cluster}:7:23: error[K007]: status.disruptionsAllowed of PodDisruptionBudget b must be an integer" \
        in result.err
    assert f"{cluster}:13:15: error[K003]: bad quantity in ResourceQuota q status.hard.cpu" in result.err
    assert "Traceback" not in result.err


def test_quota_arithmetic_is_exact_and_by_name():
    used = ResourceList.of({"cpu": "100m", "requests.cpu": "5"})
    assert used.plus(ResourceList.of({"cpu": "200m"})).exceeding(ResourceList.of({"cpu": "300m"})) == []
    assert used.plus(ResourceList.of({"cpu": "201m"})).exceeding(ResourceList.of({"cpu": "300m"})) == ["cpu"]
    assert used.masked(["requests.cpu"]).names == ["requests.cpu"]
    assert ResourceList.of({"memory": "1Gi"}).exceeding(ResourceList.of({"cpu": "0"})) == []  # no common name


def test_selectors_kubernetes_refuses_select_nothing():
    assert parse_selector(None, strict=True) is None
    assert parse_selector({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}, strict=True) is None
    assert parse_selector({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}, strict=True) is None
    assert parse_selector({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}, strict=True) is None
    assert parse_selector({}, strict=True) == []
    assert parse_selector({"matchLabels": {"a": "b"}}, strict=True) == [("a", "In", ("b",))]


_amounts = st.dictionaries(st.sampled_from(["cpu", "memory", "requests.cpu", "pods"]),
                           st.fractions(min_value=0, max_value=10**6, max_denominator=1000), max_size=4)


@settings(max_examples=60, deadline=None)
@given(_amounts, _amounts, _amounts)
def test_exceeding_is_quota_less_than_or_equal(a, b, hard):
    """quotav1.LessThanOrEqual(a + b, hard) fails exactly on the names of hard that a + b holds more of."""
    total = ResourceList(a).plus(ResourceList(b))
    want = [n for n, q in hard.items() if n in a or n in b if a.get(n, Fraction(0)) + b.get(n, Fraction(0)) > q]
    assert total.exceeding(ResourceList(hard)) == want


_anything = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=4),
                         lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                         max_leaves=12)
_expression = st.fixed_dictionaries({"key": _anything, "operator": st.sampled_from(["In", "NotIn", "Exists", "Gt"]) | _anything,
                                     "values": _anything})
_selector = st.fixed_dictionaries({}, optional={"matchLabels": _anything, "matchExpressions": st.lists(_expression | _anything,
                                                                                                      max_size=3)})


@settings(max_examples=80, deadline=None)
@given(_selector | _anything)
def test_any_selector_value_parses_or_selects_nothing(raw):
    selector = parse_selector(raw, strict=True)
    assert selector is None or isinstance(selector, list)
