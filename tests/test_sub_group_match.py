"""Which sub-group a pod joins: pkg/scheduler/api/sub_job_info_test.go's TestGetSubJobMatchValues_*.

Upstream's nil and empty results both send the pod to the job's default
sub-job (job_info.go getOrCreateSubJob tests ``len(matchValues) > 0``), so
both are ``()`` here.
"""

from __future__ import annotations

import pytest
from fumarole.runtime.ingest.kube_convert import sub_group_policies


def match_values(policy: dict, labels: dict) -> tuple[str, ...]:
    [parsed] = sub_group_policies([{"name": "p", **policy}])
    return parsed.match_values(labels)


@pytest.mark.parametrize("policy, labels, expected", [
    # _Basic
    ({"labelSelector": {"matchLabels": {"app": "test"}}, "matchLabelKeys": ["version", "env"]},
     {"app": "test", "version": "v1", "env": "dev"}, ("v1", "dev")),
    ({"matchLabelKeys": ["zone"]}, {"zone": "zone-1"}, ("zone-1",)),
    ({"labelSelector": {"matchLabels": {"app": "test"}}}, {"app": "test"}, ()),
    # _Boundary
    ({"labelSelector": {}, "matchLabelKeys": ["key"]}, {"key": "value"}, ("value",)),
    ({"labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["test", "demo"]}]},
      "matchLabelKeys": ["app"]}, {"app": "demo"}, ("demo",)),
    ({"matchLabelKeys": ["a", "b"]}, {"a": "", "b": "val"}, ()),
    # _Error
    ({"labelSelector": {"matchExpressions": [{"key": "app", "operator": "invalid"}]}, "matchLabelKeys": ["app"]},
     {"app": "test"}, ()),
    ({"labelSelector": {"matchLabels": {"app": "test"}}, "matchLabelKeys": ["version"]}, {"app": "prod"}, ()),
    ({"matchLabelKeys": ["missing"]}, {"existing": "value"}, ()),
    ({"matchLabelKeys": ["any"]}, {}, ()),
    # a selector labels.NewRequirement refuses matches no pod, as an unknown operator does
    ({"labelSelector": {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": []}]},
      "matchLabelKeys": ["app"]}, {"app": "test"}, ()),
])
def test_get_sub_job_match_values(policy, labels, expected):
    assert match_values(policy, labels) == expected
