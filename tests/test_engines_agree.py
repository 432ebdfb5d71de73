"""The fast engine decides exactly what the reference engine decides (differential, bounded).

A long run of the same property is ``python benchmarks/differential_run.py``.
"""

from __future__ import annotations

import os
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fumarole.runtime.framework.batch_forms import CHECK_ENGINES_VARIABLE
from fumarole.runtime.ingest.scheduler_options import SchedulerOptions
from tests.differential import (
    GENERIC_CONFIGS,
    clusters,
    decisions,
    decisions_trying_every_node,
    eviction_heavy_clusters,
    gpu_numa_clusters,
    hypernode_clusters,
)


@pytest.mark.parametrize("config", GENERIC_CONFIGS)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(objects=clusters())
def test_generated_clusters_get_the_same_decisions(config: str, objects: list[dict]):
    assert decisions(objects, config, "fast") == decisions(objects, config, "reference")


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=clusters(max_nodes=140))
def test_sampled_clusters_get_the_same_decisions(objects: list[dict]):
    """Above 100 nodes only a rotating sample of feasible nodes is scored."""
    assert decisions(objects, "default", "fast") == decisions(objects, "default", "reference")


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=clusters(max_nodes=4, job_sizes=(3, 9)))
def test_many_tasks_of_one_spec_on_few_nodes_get_the_same_decisions(objects: list[dict]):
    """Each placement changes a node's columns and the rows memoised per pod spec between the
    tasks of a job: the fast engine must see every change."""
    assert decisions(objects, "reclaim-preempt-binpack", "fast") == decisions(objects, "reclaim-preempt-binpack",
                                                                              "reference")
    assert decisions(objects, "default", "fast") == decisions(objects, "default", "reference")


@pytest.mark.parametrize("config", GENERIC_CONFIGS)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=clusters(job_sizes=(1, 5), placement=True))
def test_clusters_with_inter_pod_affinity_and_spread_get_the_same_decisions(config: str, objects: list[dict]):
    """Required and preferred pod (anti-)affinity and topology spread of every kind, with taints and
    selectors: the fast engine answers them from counts per topology domain, the reference engine
    scans the pods."""
    assert decisions(objects, config, "fast") == decisions(objects, config, "reference")


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=clusters(job_sizes=(1, 6), templates=True), minimum=st.sampled_from([1, 3, 100]))
def test_clusters_with_shared_pod_templates_get_the_same_decisions_with_the_equivalence_cache(
        objects: list[dict], minimum: int):
    """predicate.CacheEnable keeps the stable filters' verdict per node and pod template, made by the
    first pod of the template asked about the node (tainted, cordoned and labelled nodes; pods of
    one template with differing tolerations and selectors): the fast engine asks a task over
    batches only while it keeps a verdict for every node asked, and must keep the same first
    askers.  Also without checking each batch answer against the per-node one, since those
    per-node answers keep verdicts of their own; and with --minimum-feasible-nodes below the
    node count, so that a scan stops before the last node and the form is asked again about
    the nodes the scan surely visits."""
    options = SchedulerOptions(minimum_feasible_nodes=minimum)
    expected = decisions(objects, "cached-preempt", "reference", options)
    assert decisions(objects, "cached-preempt", "fast", options) == expected
    with mock.patch.dict(os.environ, {CHECK_ENGINES_VARIABLE: "0"}):
        assert decisions(objects, "cached-preempt", "fast", options) == expected


@pytest.mark.parametrize("config", ["reclaim-preempt-binpack", "capacity", "capacity-preempt"])
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=eviction_heavy_clusters())
def test_eviction_heavy_clusters_get_the_same_decisions(config: str, objects: list[dict]):
    """Full nodes, over-share queues, starving and higher-priority jobs: both engines evict alike,
    and preempt's allocatable bound only leaves out trials Volcano would roll back (the decisions
    equal those made trying every node)."""
    fast = decisions(objects, config, "fast")
    assert fast == decisions(objects, config, "reference")
    assert fast == decisions_trying_every_node(objects, config, "fast")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=hypernode_clusters())
def test_hypernode_clusters_get_the_same_decisions(objects: list[dict]):
    """HyperNode trees and jobs with hard and soft network topologies under
    network-topology-aware: allocate's gradient search, each HyperNode tried under a statement
    that is discarded, and the plugin's node and HyperNode scores."""
    assert decisions(objects, "topology-aware", "fast") == decisions(objects, "topology-aware", "reference")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=hypernode_clusters(nominated=True), minimum=st.integers(1, 4))
def test_hypernode_clusters_with_sampled_scans_and_nominated_nodes_get_the_same_decisions(objects: list[dict],
                                                                                         minimum: int):
    """As above with --minimum-feasible-nodes of one to four, so that a scan of most HyperNodes
    samples their nodes (where a dry run leaves the rotating start depends on what fits), and
    pending pods with a nominated node (whose one-node scan puts the start at 0)."""
    options = SchedulerOptions(minimum_feasible_nodes=minimum)
    assert decisions(objects, "topology-aware", "fast", options) == decisions(objects, "topology-aware", "reference",
                                                                              options)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=gpu_numa_clusters())
def test_gpu_and_numa_clusters_get_the_same_decisions(objects: list[dict]):
    """deviceshare (GPU memory and whole cards) and numa-aware (CPUs under every topology policy):
    the fast engine keeps deviceshare's per-node tallies as row state and memoises the predicates
    per pod spec, the reference engine asks every node."""
    assert decisions(objects, "gpu", "fast") == decisions(objects, "gpu", "reference")


@pytest.mark.parametrize("mode", ["hard", "soft"])
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=eviction_heavy_clusters(), data=st.data())
def test_sharded_schedulers_get_the_same_decisions(mode: str, objects: list[dict], data):
    """A NodeShard holding some of the nodes (another shard still using one of them): hard mode's
    scans refuse the others in both forms, soft mode's groups put the shard's nodes first in every
    action."""
    names = [o["metadata"]["name"] for o in objects if o["kind"] == "Node"]
    desired = data.draw(st.lists(st.sampled_from(names), unique=True), label="nodesDesired")
    in_use = data.draw(st.lists(st.sampled_from(names), max_size=1, unique=True), label="other shard's nodesInUse")
    objects = objects + [
        {"apiVersion": "shard.volcano.sh/v1alpha1", "kind": "NodeShard", "metadata": {"name": "volcano"},
         "spec": {"nodesDesired": desired}},
        {"apiVersion": "shard.volcano.sh/v1alpha1", "kind": "NodeShard", "metadata": {"name": "other"},
         "spec": {"nodesDesired": in_use}, "status": {"nodesInUse": in_use}}]
    options = SchedulerOptions(sharding_mode=mode)
    assert decisions(objects, "reclaim-preempt-binpack", "fast", options) == \
        decisions(objects, "reclaim-preempt-binpack", "reference", options)
