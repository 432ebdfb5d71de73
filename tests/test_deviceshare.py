"""deviceshare: the device facts it reads from nodes and pods, the assignment a bind carries, and
that the assignment outlives the session in a replay.  Its decisions are checked by the scenarios
under tests/conformance/cases/plugins/deviceshare."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fumarole.runtime.api.ascend import _parse_int32
from fumarole.runtime.api.devices import (
    GpuCard,
    VgpuCard,
    VgpuRequest,
    VgpuUse,
    _parse_uint32,
    atoi,
    gpu_share_cards,
    pod_gpu_indexes,
    pod_gpu_memory,
    pod_vgpu_assigned,
    pod_vgpu_requested,
    pod_vgpu_requests,
    vgpu_cards,
)
from fumarole.runtime.bundles.bundle import bundle_from_conf_text
from fumarole.runtime.whatif.clock import replay
from fumarole.runtime.whatif.trace import load_trace

CONF = """actions: "enqueue, allocate"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: deviceshare
    arguments:
      deviceshare.GPUSharingEnable: true
"""

CLUSTER = """apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: '8', memory: 16Gi, pods: '110', volcano.sh/gpu-memory: '16000', volcano.sh/gpu-number: '2'}
  capacity: {cpu: '8', memory: 16Gi, pods: '110', volcano.sh/gpu-memory: '16000', volcano.sh/gpu-number: '2'}
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
  annotations: {scheduling.k8s.io/group-name: pg}
spec:
  containers:
  - resources:
      requests: {cpu: '1', volcano.sh/gpu-memory: '5000'}
      limits: {volcano.sh/gpu-memory: '5000'}
status: {phase: Pending}
"""


def _node(capacity: dict | None, annotations: dict | None = None) -> SimpleNamespace:
    return SimpleNamespace(raw={"status": {"capacity": capacity}} if capacity is not None else {},
                           annotations=annotations or {})


def _task(containers: list, init: list = (), annotations: dict | None = None) -> SimpleNamespace:
    spec = {"containers": [{"resources": {"limits": c}} for c in containers],
            "initContainers": [{"resources": {"limits": c}} for c in init]}
    return SimpleNamespace(pod={"spec": spec}, derived={}, annotations=annotations or {})


def test_a_conf_enabling_deviceshare_runs_and_json_shows_the_assignment(cli, tmp_path):
    conf, cluster = tmp_path / "volcano-scheduler.conf", tmp_path / "c.yaml"
    conf.write_text(CONF)
    cluster.write_text(CLUSTER)
    result = cli("run", str(cluster), "--config", str(conf), "-o", "json", "--now", "2026-11-27T05:00:00Z")
    assert result.code == 0, result.err
    document = json.loads(result.out)
    assert document["binds"] == {"ml/infer-0": "n1"}
    assert document["bindAnnotations"] == {
        "ml/infer-0": {"volcano.sh/gpu-index": "0", "volcano.sh/predicate-time": "1795755600000000000"}}
    table = cli("run", str(cluster), "--config", str(conf), "--now", "2026-11-27T05:00:00Z")
    assert "ml/infer-0  volcano.sh/gpu-index       0" in table.out


def test_a_bad_limit_is_a_positioned_error(cli, tmp_path):
    cluster = tmp_path / "c.yaml"
    cluster.write_text(CLUSTER.replace("limits: {volcano.sh/gpu-memory: '5000'}",
                                       "limits: {volcano.sh/gpu-memory: lots}"))
    result = cli("run", str(cluster))
    assert result.code == 2
    assert f"{cluster}:29:39: error[K003]: bad quantity in Pod ml/infer-0.spec.containers[0].resources.limits" \
           ".volcano.sh/gpu-memory" in result.err
    assert "Traceback" not in result.err


def test_an_unmodelled_device_argument_is_refused(cli, tmp_path):
    conf, cluster = tmp_path / "volcano-scheduler.conf", tmp_path / "c.yaml"
    conf.write_text(CONF.replace("deviceshare.GPUSharingEnable: true", "deviceshare.AscendMindClusterVNPUEnable: true"))
    cluster.write_text(CLUSTER)
    result = cli("run", str(cluster), "--config", str(conf))
    assert result.code == 2
    assert f"{conf}:10:7: error[C010]: argument 'deviceshare.AscendMindClusterVNPUEnable' of plugin 'deviceshare' is " \
           "read by Volcano but not modelled by fumarole beyond its default false" in result.err


@pytest.mark.parametrize("switches, line, message", [
    # deviceshare.go enablePredicate: klog.Fatal when the plugin is built for the first session
    ({"GPUSharingEnable": True, "VGPUEnable": True}, 11, "deviceshare cannot turn on deviceshare.VGPUEnable together "
     "with deviceshare.GPUSharingEnable (Volcano exits when the session opens: \"gpu-share and vgpu can't be used "
     "together\")"),
    ({"GPUNumberEnable": True, "VGPUEnable": True}, 11, "deviceshare.VGPUEnable together with "
     "deviceshare.GPUNumberEnable"),
    ({"GPUSharingEnable": True, "GPUNumberEnable": True}, 11, "deviceshare.GPUNumberEnable together with "
     "deviceshare.GPUSharingEnable (Volcano exits when the session opens: \"can not define true in both gpu "
     "sharing and gpu number\")"),
    # all three: Volcano dies of its first check
    ({"GPUSharingEnable": True, "GPUNumberEnable": True, "VGPUEnable": True}, 11, "can not define true in both"),
])
def test_switches_volcano_refuses_together_are_c022_at_the_second(cli, tmp_path, switches, line, message):
    arguments = "".join(f"      deviceshare.{name}: {str(on).lower()}\n" for name, on in switches.items())
    conf, cluster = tmp_path / "volcano-scheduler.conf", tmp_path / "c.yaml"
    conf.write_text(CONF.replace("      deviceshare.GPUSharingEnable: true\n", arguments))
    cluster.write_text(CLUSTER)
    result = cli("run", str(cluster), "--config", str(conf))
    assert result.code == 2 and "Traceback" not in result.err
    assert f"{conf}:{line}:7: error[C022]: " in result.err and message in result.err, result.err
    assert result.err.count("error[") == 1


@pytest.mark.parametrize("switches", [
    {"GPUSharingEnable": True, "VGPUEnable": False},
    {"GPUNumberEnable": True},
    {"VGPUEnable": True, "GPUSharingEnable": False, "GPUNumberEnable": False},
])
def test_one_kind_of_gpu_sharing_at_a_time_runs(cli, tmp_path, switches):
    arguments = "".join(f"      deviceshare.{name}: {str(on).lower()}\n" for name, on in switches.items())
    conf, cluster = tmp_path / "volcano-scheduler.conf", tmp_path / "c.yaml"
    conf.write_text(CONF.replace("      deviceshare.GPUSharingEnable: true\n", arguments))
    cluster.write_text(CLUSTER)
    assert cli("run", str(cluster), "--config", str(conf)).code == 0


def test_cards_split_the_capacity_less_the_unhealthy_ones():
    assert gpu_share_cards(_node({"volcano.sh/gpu-memory": "10", "volcano.sh/gpu-number": "3"},
                                 {"volcano.sh/gpu-unhealthy-ids": "1,x,7"})) == [GpuCard(0, 3), GpuCard(2, 3)]
    assert gpu_share_cards(_node({"volcano.sh/gpu-memory": "10", "volcano.sh/gpu-number": "0"})) is None
    assert gpu_share_cards(_node({"volcano.sh/gpu-number": "2"})) is None
    assert gpu_share_cards(_node(None)) is None
    assert len(gpu_share_cards(_node({"volcano.sh/gpu-memory": "1", "volcano.sh/gpu-number": "1e12"}))) == 65536


def test_pod_requests_are_the_larger_of_containers_and_init_peak():
    assert pod_gpu_memory(_task([{"volcano.sh/gpu-memory": "1"}, {"volcano.sh/gpu-memory": "3"}])) == 4
    assert pod_gpu_memory(_task([{"volcano.sh/gpu-memory": "2"}],
                                [{"volcano.sh/gpu-memory": "1"}, {"volcano.sh/gpu-memory": "3"}])) == 3
    assert pod_gpu_memory(_task([{}])) == 0


def test_gpu_index_is_go_atoi_or_nothing():
    assert pod_gpu_indexes(_task([], annotations={"volcano.sh/gpu-index": "0,+2,-1"})) == [0, 2, -1]
    assert pod_gpu_indexes(_task([], annotations={"volcano.sh/gpu-index": "0, 1"})) == []
    assert pod_gpu_indexes(_task([], annotations={"volcano.sh/gpu-index": ""})) == []
    assert atoi("9223372036854775807") == 2**63 - 1 and atoi("9223372036854775808") is None


def test_atoi_of_absurdly_long_digit_runs_answers_without_an_error():
    """A label or annotation of thousands of digits (beyond Python's int-from-text limit) is no
    int64, as for Go's Atoi; leading zeros do not count, as ParseInt skips them."""
    assert atoi("1" * 5000) is None and atoi("-" + "9" * 100_000) is None
    assert atoi("0" * 5000 + "42") == 42 and atoi("-" + "0" * 5000 + "7") == -7
    assert _parse_uint32("9" * 5000) is None and _parse_uint32("0" * 5000 + "7") == 7
    assert _parse_int32("9" * 5000) == 2**31 - 1 and _parse_int32("-" + "9" * 5000) == -2**31
    assert _parse_int32("0" * 5000 + "12") == 12


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="+-0123456789 x", max_size=30))
def test_atoi_is_gos_rule(text):
    sign = text[:1] if text[:1] in "+-" else ""
    digits = text[len(sign):]
    ok = digits != "" and all(c in "0123456789" for c in digits) and -2**63 <= int(text) < 2**63
    assert atoi(text) == (int(text) if ok else None)


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=12), st.text(max_size=12), st.text(max_size=12))
def test_any_annotation_or_capacity_text_gives_facts_not_a_crash(index, memory, unhealthy):
    task = _task([{"volcano.sh/gpu-memory": memory}], annotations={"volcano.sh/gpu-index": index})
    assert isinstance(pod_gpu_indexes(task), list)
    assert pod_gpu_memory(task) >= 0 or memory.strip().startswith("-")
    cards = gpu_share_cards(_node({"volcano.sh/gpu-memory": memory, "volcano.sh/gpu-number": "2"},
                                  {"volcano.sh/gpu-unhealthy-ids": unhealthy}))
    assert cards is None or len(cards) <= 2


TRACE = """apiVersion: fumarole/v1
kind: Trace
metadata: {name: shared-gpu}
start: "2026-11-27T05:00:00Z"
cluster:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  status:
    allocatable: {cpu: '8', memory: 16Gi, pods: '110'}
    capacity: {cpu: '8', memory: 16Gi, pods: '110', volcano.sh/gpu-memory: '8000', volcano.sh/gpu-number: '1'}
- apiVersion: scheduling.volcano.sh/v1beta1
  kind: Queue
  metadata: {name: default}
  spec: {weight: 1}
  status: {state: Open}
events:
"""

SUBMIT = """- at: {at}
  submit:
    podGroup:
      apiVersion: scheduling.volcano.sh/v1beta1
      kind: PodGroup
      metadata: {{name: {name}, namespace: ml}}
      spec: {{queue: default, minMember: 1}}
    tasks:
    - replicas: 1
      runTime: 1h
      pod:
        metadata: {{name: {name}}}
        spec:
          containers:
          - resources: {{requests: {{cpu: '1'}}, limits: {{volcano.sh/gpu-memory: '6000'}}}}
"""


def test_the_card_a_bind_assigns_is_held_in_the_next_sessions_of_a_replay(tmp_path: Path):
    """The second pod finds the only card holding the first pod's 6000 of 8000 (from the
    annotation the first bind wrote), so it starts when the first pod ends, not a minute in."""
    trace = tmp_path / "trace.yaml"
    trace.write_text(TRACE + SUBMIT.format(at="0s", name="first") + SUBMIT.format(at="1m", name="second"))
    run = replay(load_trace(trace), bundle_from_conf_text(CONF, "volcano-scheduler.conf"))
    started = {job["job"]: job["started"] for job in run.jobs}
    assert started == {"ml/first": 0.0, "ml/second": 3600.0}


def _vgpu_node(register: str | None, allocatable: dict | None = None) -> SimpleNamespace:
    allocatable = {"volcano.sh/vgpu-number": "10", "volcano.sh/vgpu-cores": "100",
                   "volcano.sh/vgpu-memory": "30000"} if allocatable is None else allocatable
    return SimpleNamespace(raw={"status": {"allocatable": allocatable}},
                           annotations={} if register is None else {"volcano.sh/node-vgpu-register": register})


def test_vgpu_cards_come_from_the_register_annotation():
    cards = vgpu_cards(_vgpu_node("GPU-a,10,30000,NVIDIA-T4,true,hami-core:junk:GPU-b,x,20000,NVIDIA,maybe,mig:"))
    assert cards == [VgpuCard(0, "GPU-a", 10, 30000, "NVIDIA-T4", True), VgpuCard(2, "GPU-b", 0, 20000, "NVIDIA", False)]
    assert vgpu_cards(_vgpu_node("GPU-a,10,30000,NVIDIA,true:")) is None  # a card of five fields voids the node
    assert vgpu_cards(_vgpu_node("GPU-a,10,30000,NVIDIA,true,hami-core")) is None  # no ':' at all
    assert vgpu_cards(_vgpu_node(None)) is None
    assert vgpu_cards(_vgpu_node("GPU-a,1,1,NVIDIA,true,x:", {"volcano.sh/vgpu-number": "1"})) is None


def test_vgpu_requests_per_container():
    task = _task([{"volcano.sh/vgpu-number": "2", "volcano.sh/vgpu-cores": "30"}, {"cpu": "1"},
                  {"volcano.sh/vgpu-memory": "1000"}, {"volcano.sh/vgpu-number": "500m"}])
    assert pod_vgpu_requested(task)
    assert pod_vgpu_requests(task) == [VgpuRequest(2, 0, 100, 30), VgpuRequest(1, 1000, 101, 0), VgpuRequest(0, 0, 100, 0)]
    assert not pod_vgpu_requested(_task([{"volcano.sh/vgpu-cores": "30"}]))


def test_vgpu_assignment_annotation_skips_what_go_skips():
    task = _task([], annotations={"volcano.sh/vgpu-ids-new": "GPU-a,NVIDIA,100,10:GPU-b,NVIDIA,-1,0:x,y:;GPU-c,NVIDIA,5,0:"})
    assert pod_vgpu_assigned(task) == [VgpuUse("GPU-a", "NVIDIA", 100, 10), VgpuUse("GPU-c", "NVIDIA", 5, 0)]


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab,:;0123456789-tx"), max_size=40))
def test_any_vgpu_annotation_text_gives_facts_not_a_crash(text):
    cards = vgpu_cards(_vgpu_node(text))
    assert cards is None or all(card.index >= 0 for card in cards)
    assert all(use.memory >= 0 for use in pod_vgpu_assigned(_task([], annotations={"volcano.sh/vgpu-ids-new": text})))
