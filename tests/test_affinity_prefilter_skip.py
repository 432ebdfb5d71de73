"""Volcano's cycle state keeps, for the whole session, the filters a pre-filter asked to skip
(predicates.go handleSkipPrePredicatePlugin inserts, nothing removes): once Kubernetes'
InterPodAffinity PreFilter returned Skip for a task (no required terms of its own, no placed
pod's required anti-affinity reaching it), its Filter and the dry run's simulate hooks stay off
for that task, even after a later pre-predicate sees a pod whose anti-affinity refuses it."""

from __future__ import annotations

import pytest

from fumarole.runtime.bundles.bundle import build_bundle
from fumarole.runtime.framework.lifecycle import new_session, open_session
from fumarole.runtime.framework.session import Session
from fumarole.runtime.framework.statement import Statement
from fumarole.runtime.ingest.kube import cluster_from_objects
from fumarole.runtime.ingest.scheduler_config import config_from_document


def _node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "4", "memory": "4G", "pods": "10"},
                       "capacity": {"cpu": "4", "memory": "4G", "pods": "10"}}}


def _pod(name: str, group: str, labels: dict, affinity: dict | None = None) -> dict:
    spec: dict = {"containers": [{"resources": {"requests": {"cpu": "1", "memory": "1G"}}}]}
    if affinity:
        spec["affinity"] = affinity
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"uid": f"c1-{name}", "namespace": "c1", "name": name, "labels": labels,
                         "annotations": {"scheduling.k8s.io/group-name": group}},
            "spec": spec, "status": {"phase": "Pending"}}


def _group(name: str) -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"namespace": "c1", "name": name},
            "spec": {"queue": "q1", "minMember": 1}, "status": {"phase": "Inqueue"}}


_AVOID_WEB = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}


def _session(engine: str) -> Session:
    objects = [_node("n1"), _node("n2"),
               _pod("web", "pg1", {"app": "web"}), _pod("late", "pg3", {"app": "web"}),
               _pod("loner", "pg2", {"app": "db"}, _AVOID_WEB),
               _group("pg1"), _group("pg2"), _group("pg3"),
               {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q1"},
                "spec": {"weight": 1}, "status": {"state": "Open"}}]
    config = config_from_document({"actions": "", "tiers": [{"plugins": [{"name": "predicates"}]}]})
    ssn = new_session(build_bundle(config), cluster_from_objects(objects), engine=engine)
    open_session(ssn, "test")
    return ssn


def _task(ssn: Session, key: str):
    return next(t for job in ssn.job_list for t in job.tasks.values() if t.key == key)


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_skipped_inter_pod_affinity_filter_stays_off_for_the_session(engine: str):
    ssn = _session(engine)
    web, late, loner = _task(ssn, "c1/web"), _task(ssn, "c1/late"), _task(ssn, "c1/loner")
    n1 = ssn.nodes["n1"]
    assert ssn.H.pre_predicate(web) is None  # nothing placed repels web: the pre-filter skips
    assert Statement(ssn).allocate(loner, n1)  # loner's anti-affinity now repels app=web from n1
    assert ssn.H.pre_predicate(web) is None
    assert ssn.H.predicate(web, n1) is None  # the filter stays skipped: n1 passes
    assert ssn.H.simulate_predicate(web, n1) is None  # and so does the dry run's
    # A task whose first pre-predicate sees loner does not skip: n1 is refused.
    assert ssn.H.pre_predicate(late) is None
    failure = ssn.H.predicate(late, n1)
    assert failure is not None and failure.reasons == ["node(s) didn't satisfy existing pods anti-affinity rules"]
    assert ssn.H.predicate(late, ssn.nodes["n2"]) is None
    assert ssn.H.simulate_predicate(late, n1) is not None
