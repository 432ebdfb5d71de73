"""deviceshare's Ascend vNPU facts: the node register annotation decoded as Go's json.Unmarshal
does, a pod's requests and its assignment annotation, and that hostile annotations answer
Volcano's way (no device, nothing held) instead of raising.  The decisions built on them are
the Ascend scenarios under tests/conformance/cases/plugins/deviceshare."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fumarole.runtime.api.ascend import (
    AscendCard,
    ascend_cards,
    decode_register,
    pod_ascend_assigned,
    pod_ascend_requests,
)
from fumarole.runtime.api.devices import VgpuRequest, VgpuUse
from fumarole.runtime.framework.go_semantics import json_string

REGISTER = "hami.io/node-register-Ascend310P"
ALLOCATED = "hami.io/Ascend310P-devices-allocated"


def _node(register: str | None, npus: str = "1") -> SimpleNamespace:
    return SimpleNamespace(raw={"status": {"allocatable": {"huawei.com/Ascend310P": npus}}},
                           annotations={} if register is None else {REGISTER: register})


def _task(limits: dict, requests: dict | None = None, annotations: dict | None = None) -> SimpleNamespace:
    spec = {"containers": [{"resources": {"limits": limits, "requests": requests or {}}}]}
    return SimpleNamespace(pod={"spec": spec}, derived={}, annotations=annotations or {})


def test_register_keys_match_case_insensitively_and_the_last_occurrence_wins():
    text = '[{"ID":"a","count":1,"Count":3,"devmem":21527,"DevCore":8,"unknown":[1]}]'
    assert decode_register(text) == [AscendCard("a", 3, 21527, 8, 21527)]


@pytest.mark.parametrize("text", [
    '[{"id":"a","count":1.5}]',            # a fraction does not decode into int32
    '[{"id":"a","count":2147483648}]',     # out of int32
    '[{"id":"a","devmem":1e3}]',           # an exponent neither
    '[{"id":7}]',                          # a number for a string
    '[{"id":"a","health":1}]',             # a number for a bool
    '[{"id":"a","index":-1}]',             # index is unsigned
    '[{"id":"a","custominfo":[]}]',        # a list for a map
    '[null]',                              # a nil *DeviceInfo
    '[[["id","a"]]]',                      # a list is not an object
    '{"id":"a"}',                          # not a list
    '[{"id":"a","count":NaN}]',            # not JSON to Go
    '[]', 'null', '', '[{"id":"a"}] x',    # no card, no text, trailing text
    '[' * 5000,                            # deeper than the decoder goes
])
def test_what_go_does_not_decode_is_no_device(text):
    assert decode_register(text) is None


def test_a_null_field_leaves_it_zero():
    assert decode_register('[{"id":null,"count":2,"devmem":null}]') == [AscendCard("", 2, 0, 0, 0)]


def test_a_whole_card_request_takes_go_int32_arithmetic():
    # devmem * 100 wraps around in int32 before the division truncates toward zero
    assert decode_register('[{"id":"a","devmem":30000000}]') == [AscendCard("a", 0, 30000000, 0, -12949672)]


def test_cards_need_allocatable_npus_and_a_repeated_id_is_one_card():
    register = '[{"id":"a","count":1},{"id":"b","count":2},{"id":"a","count":5}]'
    assert ascend_cards(_node(register)) == [AscendCard("a", 5, 0, 0, 0), AscendCard("b", 2, 0, 0, 0)]
    assert ascend_cards(_node(register, npus="0")) is None
    assert ascend_cards(_node(None)) is None


def test_requests_read_limits_then_requests_as_go_int32():
    task = _task({"huawei.com/Ascend310P": "2", "huawei.com/Ascend310P-core": "4294967297"},
                 {"huawei.com/Ascend310P-memory": "3000"})
    assert pod_ascend_requests(task) == [VgpuRequest(2, 3000, 101, 1)]
    assert pod_ascend_requests(_task({"huawei.com/Ascend310P-memory": "0"})) == [VgpuRequest(1, 0, 100, 0)]
    assert pod_ascend_requests(_task({"cpu": "1"})) == []


def test_the_assignment_is_read_whole_as_volcano_decodes_it():
    task = _task({}, annotations={ALLOCATED: "a,Ascend310P,3072,0:;b,Ascend310P,x,99999999999:;"})
    assert pod_ascend_assigned(task) == [VgpuUse("a", "Ascend310P", 3072, 0),
                                         VgpuUse(";b", "Ascend310P", 0, 2147483647)]
    assert pod_ascend_assigned(_task({}, annotations={ALLOCATED: "a,Ascend310P,1,1:b,c"})) == []
    assert pod_ascend_assigned(_task({}, annotations={ALLOCATED: "invalid format"})) == []


def test_json_string_writes_what_go_marshals():
    assert json_string('a"<b>&\\\n\x01\u2028') == '"a\\"\\u003cb\\u003e\\u0026\\\\\\n\\u0001\\u2028"'
    assert json.loads(json_string("npu-\u00e9")) == "npu-\u00e9"


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-(1 << 70), 1 << 70) | st.floats() | st.text(max_size=6),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                         st.sampled_from(["id", "ID", "count", "devmem", "devcore", "index", "health", "custominfo", "x"]),
                         inner, max_size=5),
                     max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(st.one_of(_JSON.map(json.dumps), st.text(alphabet='[]{}",:0123456789.eE-nultrfa ', max_size=40)))
def test_any_register_text_decodes_or_is_no_device(text):
    cards = decode_register(text)
    assert cards is None or (cards and all(isinstance(card, AscendCard) for card in cards))
    assert cards is None or all(-(1 << 31) <= card.count < 1 << 31 for card in cards)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab,:;0123456789-+x"), max_size=40))
def test_any_assignment_text_reads_without_raising(text):
    for use in pod_ascend_assigned(_task({}, annotations={ALLOCATED: text})):
        assert -(1 << 31) <= use.memory < 1 << 31 and -(1 << 31) <= use.cores < 1 << 31


CONF = """actions: "enqueue, allocate"
tiers:
- plugins:
  - name: gang
  - name: predicates
  - name: deviceshare
    arguments:
      deviceshare.AscendHAMiVNPUEnable: true
"""

CLUSTER = """apiVersion: v1
kind: Node
metadata:
  name: n1
  annotations: {hami.io/node-register-Ascend310P: '[{"id":"npu-0","count":2,"devmem":21527,"devcore":8}]'}
status:
  allocatable: {cpu: '8', memory: 16Gi, pods: '110', huawei.com/Ascend310P: '1'}
---
apiVersion: v1
kind: Node
metadata:
  name: n2
  annotations: {hami.io/node-register-Ascend310P: '[{"id": [[[[[[[[[[[[[[[[[[[['}
status:
  allocatable: {cpu: '1', memory: 1Gi, pods: '110', huawei.com/Ascend310P: '99999999999999999999'}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: default}
spec: {weight: 1}
status: {state: Open}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg, namespace: ml}
spec: {queue: default, minMember: 1}
---
apiVersion: v1
kind: Pod
metadata:
  name: infer-0
  namespace: ml
  annotations: {scheduling.k8s.io/group-name: pg, hami.io/Ascend310P-devices-allocated: 'x,y:::;;,'}
spec:
  containers:
  - resources:
      requests: {cpu: '2'}
      limits: {huawei.com/Ascend310P: '1', huawei.com/Ascend310P-memory: '5000', huawei.com/Ascend310P-core: '1e30'}
status: {phase: Pending}
"""


def test_a_conf_enabling_ascend_vnpu_runs_and_json_shows_the_assignment(cli, tmp_path):
    conf, cluster = tmp_path / "volcano-scheduler.conf", tmp_path / "c.yaml"
    conf.write_text(CONF)
    cluster.write_text(CLUSTER)
    result = cli("run", str(cluster), "--config", str(conf), "-o", "json", "--now", "2026-11-27T05:00:00Z")
    assert result.code == 0, result.err
    assert "Traceback" not in result.err
    document = json.loads(result.out)
    assert document["binds"] == {"ml/infer-0": "n1"}
    annotations = document["bindAnnotations"]["ml/infer-0"]
    # 1e30 cores: the int64Amount {1, 30}, whose AsInt64 overflows (not ok), so ExtractResourceRequest
    # keeps its 0 cores (quantity.go AsInt64, math.go positiveScaleInt64, devices/util.go)
    assert annotations["hami.io/Ascend310P-devices-allocated"] == "npu-0,Ascend310P,6144,0:;"
    assert annotations["huawei.com/Ascend310P"] == '[{"UUID":"npu-0","temp":"vir02"}]'
    assert annotations["hami.io/bind-phase"] == "allocating"
