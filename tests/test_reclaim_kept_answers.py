"""Reclaim keeps what each node answered `may_yield` (reclaim.policy): for every job of the
reclaimer's queue when every plugin's bound declares it reads only queue-level state
(`may_reclaim_from_reads_queue`, docs/hooks.md "Victim bounds"), else for the tasks of one job
with one request, and forgets the answers a change may have changed.  The decisions are those of
asking every node afresh for every reclaimer, on both engines; a site policy whose bound reads
the reclaimer's request does not declare it, and reclaim falls back to keeping answers per job."""

from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings

from benchmarks.objects import container, gang_pod, queue_object, run_on
from benchmarks.shapes import eviction_objects
from fumarole.runtime.authoring.scenario import decisions_as_expect
from fumarole.runtime.bundles.bundle import build_bundle
from fumarole.runtime.bundles.library import compile_sources, standard_library, standard_library_sources
from fumarole.runtime.framework.lifecycle import new_session, open_session, run_session
from fumarole.runtime.ingest.kube import cluster_from_objects
from fumarole.runtime.ingest.scheduler_config import config_from_document
from tests.differential import CONFIGS, reclaim_clusters

# reclaim's reuse of a kept answer: without it every reclaimer asks every node afresh.
KEEPING = ("        if node not in answers:\n            answers[node] = may_yield(task, job, node, from_queues)\n",
           "        answers[node] = may_yield(task, job, node, from_queues)\n")

# Sharing the answers among a queue's jobs whatever the plugins' bounds read (unsound).
SHARING = ("    let by_queue = may_reclaim_from_reads_queue()\n", "    let by_queue = true\n")

# A site rule whose bound reads the reclaimer's request: it takes only tasks asking no more than
# the reclaimer.  Its plugin declares nothing, so reclaim may not share answers among a queue's jobs.
SITE = """plugin no-bigger

on reclaimable(reclaimer, candidates):
    for candidate in candidates:
        victim candidate when candidate.request <= reclaimer.request

on may_reclaim_from(reclaimer, jobs):
    for job in jobs:
        for task in job.tasks:
            return true when task.request <= reclaimer.request
    return false
"""
# The site rule decides reclaim's victims alone (with gang and conformance, in their tier).
SITE_CONFIG = {"actions": "enqueue, allocate, reclaim",
               "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"},
                                      {"name": "no-bigger"}]},
                         {"plugins": [{"name": "drf", "enableReclaimable": False}, {"name": "predicates"},
                                      {"name": "proportion", "enableReclaimable": False}, {"name": "nodeorder"}]}]}
CONFIG_DOCS = {"reclaim-preempt-binpack": CONFIGS["reclaim-preempt-binpack"],
               "reclaim-hdrf": CONFIGS["reclaim-hdrf"], "site-no-bigger": SITE_CONFIG}


@lru_cache(maxsize=None)
def _bundle(config: str, keeping: bool, shared: bool = False):
    """The configuration's bundle, over the standard library (with the site plugin where the
    configuration lists it), or over one whose reclaim keeps no answer (``keeping`` false), or
    one that shares answers among a queue's jobs whatever the plugins declare (``shared``)."""
    library = standard_library()
    if not keeping or shared:
        sources = []
        for name, text in standard_library_sources():
            if name.endswith("actions/reclaim.policy"):
                assert text.count(KEEPING[0]) == 1 and text.count(SHARING[0]) == 1, \
                    "reclaim.policy's kept answers changed: update this test"
                text = text.replace(*SHARING) if shared else text.replace(*KEEPING)
            sources.append((name, text))
        library = compile_sources(sources)
    if config == "site-no-bigger":
        library = compile_sources([("no-bigger.policy", SITE)], base=library)
    return build_bundle(config_from_document(CONFIG_DOCS[config]), library=library)


def _decisions(objects: list[dict], config: str, engine: str, keeping: bool) -> dict:
    return decisions_as_expect(run_session(new_session(_bundle(config, keeping), cluster_from_objects(objects),
                                                       now=1_800_000_000.0, engine=engine)))


def _shares_by_queue(config: str) -> bool:
    session = new_session(_bundle(config, True), cluster_from_objects(eviction_objects(4, "priority")),
                          now=1_800_000_000.0)
    open_session(session, None)
    return session.H.may_reclaim_from_reads_queue()


def test_only_queue_level_bounds_share_answers_among_a_queue_s_jobs():
    """gang, proportion and drf without its hierarchy declare; drf with it and the site plugin,
    whose bound reads the request, do not."""
    assert _shares_by_queue("reclaim-preempt-binpack") is True
    assert _shares_by_queue("reclaim-hdrf") is False
    assert _shares_by_queue("site-no-bigger") is False


def _one_full_node() -> list[dict]:
    """One node full with two 2-CPU tasks of a gang of one in queue qa, and in queue qb two
    pending jobs: j1 asking 1 CPU (first in job order), j2 asking 2.  The site rule lets j1 take
    nothing there, and j2 one task."""
    objects = [{"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": "n000", "labels": {"kubernetes.io/hostname": "n000"}},
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                           "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
               queue_object("qa", {"weight": 1, "reclaimable": True}), queue_object("qb", {"weight": 1})]
    for j, (queue, cpus, running) in enumerate([("qa", [2, 2], True), ("qb", [1], False), ("qb", [2], False)]):
        objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                        "metadata": {"name": f"j{j}", "namespace": "ns",
                                     "creationTimestamp": f"2026-01-01T00:00:{j:02d}Z"},
                        "spec": {"queue": queue, "minMember": 1},
                        "status": {"phase": "Running" if running else "Pending"}})
        for p, cpu in enumerate(cpus):
            pod = gang_pod(f"j{j}-{p}", "ns", f"u-j{j}-{p}", f"j{j}", {"containers": [container(cpu, "1Gi")]},
                           created=f"2026-01-01T00:01:{p:02d}Z")
            objects.append(run_on(pod, "n000", started="2026-01-01T00:02:00Z") if running else pod)
    return objects


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_bound_reading_the_request_keeps_answers_per_job(engine):
    """j1's answer (nothing to take) is not j2's: sharing it among qb's jobs would leave j2
    without its victim; reclaim keeps answers per job, as the site plugin declares nothing."""
    objects = _one_full_node()
    kept = _decisions(objects, "site-no-bigger", engine, True)
    assert kept == _decisions(objects, "site-no-bigger", engine, False)
    assert kept["evicted"] == ["ns/j0-0"] or kept["evicted"] == ["ns/j0-1"], kept
    shared = decisions_as_expect(run_session(new_session(_bundle("site-no-bigger", True, shared=True),
                                                         cluster_from_objects(objects), now=1_800_000_000.0,
                                                         engine=engine)))
    assert not shared["evicted"]


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_kept_answers_decide_as_asking_afresh_on_the_priority_shape(engine):
    """The 40-node priority shape: starving jobs of a queue that place nothing ask the nodes once."""
    objects = eviction_objects(40, "priority")
    kept = _decisions(objects, "reclaim-preempt-binpack", engine, True)
    assert kept == _decisions(objects, "reclaim-preempt-binpack", engine, False) and kept["evicted"]


@pytest.mark.parametrize("config", ["reclaim-preempt-binpack", "site-no-bigger"])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=reclaim_clusters())
def test_kept_answers_never_change_a_decision(config: str, objects: list[dict]):
    """Full nodes shared by queues above and below their share: both engines decide with the
    answers kept (per queue, or per job under the site plugin) what reclaim decides afresh."""
    afresh = _decisions(objects, config, "fast", False)
    for engine in ("fast", "reference"):
        assert _decisions(objects, config, engine, True) == afresh


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=reclaim_clusters(hierarchy=True))
def test_kept_answers_never_change_a_hierarchical_decision(objects: list[dict]):
    """Under HDRF (answers kept per job and request, all forgotten at a change) likewise."""
    afresh = _decisions(objects, "reclaim-hdrf", "fast", False)
    for engine in ("fast", "reference"):
        assert _decisions(objects, "reclaim-hdrf", engine, True) == afresh
