"""Facts kept per pod spec (podspec.cached_per_spec): whether a pod has required pod terms or a
DoNotSchedule spread constraint is asked of every preemptor at every attempt and kept for every
pod with the same spec, so it must read the spec alone: pods of one spec in other namespaces or
with other labels (which fill the terms and constraints in) get the answer their own terms give."""

from __future__ import annotations

from fumarole.runtime.k8s.interpodaffinity import has_required_pod_terms, required_terms
from fumarole.runtime.k8s.podtopologyspread import has_hard_spread_constraints, spread_constraints
from tests.test_k8s import make_pod

ANTI_AFFINITY = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}
PREFERRED_ONLY = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 5, "podAffinityTerm": {"labelSelector": {}, "topologyKey": "zone"}}]}}
HARD_SPREAD = [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["rev"]}]
SOFT_SPREAD = [dict(HARD_SPREAD[0], whenUnsatisfiable="ScheduleAnyway")]


def _own_terms(task) -> bool:
    return bool(required_terms(task, "podAffinity", True) or required_terms(task, "podAntiAffinity", True))


def test_pods_of_one_spec_in_other_namespaces_and_labels_answer_as_their_own_terms():
    specs = [{"affinity": ANTI_AFFINITY}, {"affinity": PREFERRED_ONLY}, {},
             {"topologySpreadConstraints": HARD_SPREAD}, {"topologySpreadConstraints": SOFT_SPREAD},
             {"affinity": ANTI_AFFINITY, "topologySpreadConstraints": HARD_SPREAD}]
    answers = []
    for spec in specs:
        pods = [make_pod(f"p{i}", namespace=ns, labels=labels, **spec)
                for i, (ns, labels) in enumerate([("a", {}), ("b", {"rev": "2"}), ("a", {"app": "web", "rev": "1"})])]
        for pod in pods:  # the first pod of the spec fills the kept answer, the others read it
            assert has_required_pod_terms(pod) == _own_terms(pod)
            assert has_hard_spread_constraints(pod) == bool(spread_constraints(pod, "DoNotSchedule"))
        answers.append((has_required_pod_terms(pods[-1]), has_hard_spread_constraints(pods[-1])))
    assert answers == [(True, False), (False, False), (False, False), (False, True), (False, False), (True, True)]


def test_a_spec_differing_only_in_its_terms_is_not_answered_from_another():
    plain = make_pod("plain")
    assert not has_required_pod_terms(plain) and not has_hard_spread_constraints(plain)
    guarded = make_pod("guarded", affinity=ANTI_AFFINITY, topologySpreadConstraints=HARD_SPREAD)
    assert has_required_pod_terms(guarded) and has_hard_spread_constraints(guarded)
