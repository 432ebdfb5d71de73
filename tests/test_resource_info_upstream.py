"""Volcano's resource_info_test.go tables (ed72c7c8), restated on fumarole's resource vector.

Each table below quotes an upstream test's rows (its name in the comment above the table); the
tests at the end run them through the matching function of ``fumarole.runtime.api.resource``,
the standard library the policies call.  Rows whose ``req`` is Go's nil are kept where the
fumarole function takes an optional request (``less_equal_with_dimension``); elsewhere the
policy language has no none request to pass, and those rows are skipped by ``_requested``.
"""

import sys

import pytest

from fumarole.runtime.api.resource import (
    INFINITY,
    ZERO,
    Resource,
    diff,
    equal,
    greater_partly_relevant,
    greater_partly_with_dimension,
    less,
    less_equal,
    less_equal_partly,
    less_equal_partly_with_dimension,
    less_equal_partly_with_dimension_zero_filtered,
    less_equal_with_dimension,
    less_equal_with_names,
    less_partly,
)


def R(milli_cpu: float = 0, memory: float = 0, scalars: dict[str, float] | None = None) -> Resource:
    """Go's ``&Resource{MilliCPU: ..., Memory: ..., ScalarResources: ...}`` (nil map: None)."""
    return Resource(milli_cpu, memory, None if scalars is None else {k: float(v) for k, v in scalars.items()})


# TestAddResource
ADD_RESOURCE = [
    dict(resource1=R(), resource2=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1, "hugepages-test": 2}), expected=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1, "hugepages-test": 2})),
    dict(resource1=R(milli_cpu=4000, memory=4000, scalars={"scalar.test/scalar1": 1, "hugepages-test": 2}), resource2=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 4, "hugepages-test": 5}), expected=R(milli_cpu=8000, memory=6000, scalars={"scalar.test/scalar1": 5, "hugepages-test": 7})),
    dict(resource1=R(milli_cpu=4000, memory=4000, scalars={"scalar.test/scalar1": 1}), resource2=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 4, "hugepages-test": 5}), expected=R(milli_cpu=8000, memory=6000, scalars={"scalar.test/scalar1": 5, "hugepages-test": 5})),
]


# TestIntersection and TestIntersectionWithIgnoredScalarResources (ignored: "pods")
INTERSECTION = [
    dict(name="no intersection", r1=R(milli_cpu=1000), r2=R(memory=2048), want=[]),
    dict(name="left is empty resources", r1=R(), r2=R(memory=2048, scalars={"fpga": 2}), want=[]),
    dict(name="right is empty resources", r1=R(memory=2048, scalars={"fpga": 2}), r2=R(), want=[]),
    dict(name="partial intersection with scalar", r1=R(scalars={"fpga": 2, "nvidia.com/gpu": 1}), r2=R(scalars={"fpga": 1, "rdma": 1}), want=["fpga"]),
    dict(name="intersection with zero value scalar", r1=R(milli_cpu=0.2, scalars={"fpga": 0, "nvidia.com/gpu": 1}), r2=R(milli_cpu=1, scalars={"fpga": 2, "nvidia.com/gpu": 2}), want=["cpu", "nvidia.com/gpu"]),
]
INTERSECTION_WITH_IGNORED_SCALAR_RESOURCES = [
    dict(name="no intersection", r1=R(milli_cpu=1000), r2=R(memory=2048), want=[]),
    dict(name="empty resources", r1=R(), r2=R(), want=[]),
    dict(name="intersection with ignored scalar", r1=R(scalars={"pods": 2, "nvidia.com/gpu": 1}), r2=R(scalars={"pods": 1, "nvidia.com/gpu": 2}), want=["nvidia.com/gpu"]),
    dict(name="intersection with only ignored scalar", r1=R(scalars={"pods": 2}), r2=R(scalars={"pods": 1}), want=[]),
]


# TestSetMaxResource
SET_MAX_RESOURCE = [
    dict(resource1=R(), resource2=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1, "hugepages-test": 2}), expected=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1, "hugepages-test": 2})),
    dict(resource1=R(milli_cpu=4000, memory=4000, scalars={"scalar.test/scalar1": 1, "hugepages-test": 2}), resource2=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 4, "hugepages-test": 5}), expected=R(milli_cpu=4000, memory=4000, scalars={"scalar.test/scalar1": 4, "hugepages-test": 5})),
]


# TestIsZero
IS_ZERO = [
    dict(resource=R(), resourceName="cpu", expected=True),
    dict(resource=R(milli_cpu=4000, memory=4000, scalars={"scalar.test/scalar1": 4, "hugepages-test": 5}), resourceName="cpu", expected=False),
    dict(resource=R(milli_cpu=4000, memory=4000, scalars={"scalar.test/scalar1": 0, "hugepages-test": 5}), resourceName="scalar.test/scalar1", expected=True),
]


# TestSubResource
SUB_RESOURCE = [
    dict(resource1=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1, "hugepages-test": 2}), resource2=R(), expected=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1, "hugepages-test": 2})),
    dict(resource1=R(milli_cpu=4000, memory=4000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(milli_cpu=3000, memory=2000, scalars={"scalar.test/scalar1": 500, "hugepages-test": 1000}), expected=R(milli_cpu=1000, memory=2000, scalars={"scalar.test/scalar1": 500, "hugepages-test": 1000})),
]


# TestDiff
DIFF_ZERO = [
    dict(resource1=R(), resource2=R(), expectedIncreased=R(scalars={}), expectedDecreased=R(scalars={})),
    dict(resource1=R(milli_cpu=1000, memory=2000), resource2=R(), expectedIncreased=R(milli_cpu=1000, memory=2000, scalars={}), expectedDecreased=R(scalars={})),
    dict(resource1=R(), resource2=R(milli_cpu=1000, memory=2000), expectedIncreased=R(scalars={}), expectedDecreased=R(milli_cpu=1000, memory=2000, scalars={})),
    dict(resource1=R(milli_cpu=1000, memory=2000, scalars={"scalar.test/scalar1": 1000}), resource2=R(milli_cpu=2000, memory=1000), expectedIncreased=R(memory=1000, scalars={"scalar.test/scalar1": 1000}), expectedDecreased=R(milli_cpu=1000, scalars={})),
    dict(resource1=R(milli_cpu=2000, memory=1000), resource2=R(milli_cpu=1000, memory=2000, scalars={"scalar.test/scalar1": 1000}), expectedIncreased=R(milli_cpu=1000, scalars={}), expectedDecreased=R(memory=1000, scalars={"scalar.test/scalar1": 1000})),
    dict(resource1=R(milli_cpu=1000, memory=2000, scalars={"scalar.test/scalar1": 3000}), resource2=R(milli_cpu=2000, memory=1000, scalars={"scalar.test/scalar1": 1000}), expectedIncreased=R(memory=1000, scalars={"scalar.test/scalar1": 2000}), expectedDecreased=R(milli_cpu=1000, scalars={})),
]

DIFF_INFINITY = [
    dict(resource1=R(milli_cpu=1000, memory=2000, scalars={"scalar.test/scalar1": 1000}), resource2=R(milli_cpu=2000, memory=1000), expectedIncreased=R(memory=1000, scalars={}), expectedDecreased=R(milli_cpu=1000, scalars={"scalar.test/scalar1": -1})),
    dict(resource1=R(milli_cpu=2000, memory=1000), resource2=R(milli_cpu=1000, memory=2000, scalars={"scalar.test/scalar1": 1000}), expectedIncreased=R(milli_cpu=1000, scalars={"scalar.test/scalar1": -1}), expectedDecreased=R(memory=1000, scalars={})),
]


# TestLess
LESS_ZERO = [
    dict(resource1=R(), resource2=R(), expected=False),
    dict(resource1=R(), resource2=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), expected=True),
    dict(resource1=R(milli_cpu=4000, memory=4000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(milli_cpu=8000, memory=8000, scalars={"scalar.test/scalar1": 4000, "hugepages-test": 5000}), expected=True),
    dict(resource1=R(milli_cpu=4000, memory=4000, scalars={"scalar.test/scalar1": 5000, "hugepages-test": 2000}), resource2=R(milli_cpu=8000, memory=8000, scalars={"scalar.test/scalar1": 4000, "hugepages-test": 5000}), expected=False),
    dict(resource1=R(milli_cpu=9000, memory=4000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(milli_cpu=8000, memory=8000, scalars={"scalar.test/scalar1": 4000, "hugepages-test": 5000}), expected=False),
]

LESS_INFINITY = [
    dict(resource1=R(milli_cpu=1000, memory=1000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(milli_cpu=2000, memory=2000, scalars={"hugepages-test": 3000}), expected=True),
    dict(resource1=R(milli_cpu=1000, memory=1000, scalars={"hugepages-test": 1000}), resource2=R(milli_cpu=2000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), expected=False),
    dict(resource1=R(milli_cpu=1000, memory=1000, scalars={"hugepages-test": 2000}), resource2=R(milli_cpu=2000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), expected=False),
]


# TestLessEqual
LESS_EQUAL_ZERO = [
    dict(resource1=R(), resource2=R(), expected=True),
    dict(resource1=R(), resource2=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), expected=True),
    dict(resource1=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(), expected=False),
    dict(resource1=R(milli_cpu=4000, memory=4000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(milli_cpu=8000, memory=8000, scalars={"scalar.test/scalar1": 4000, "hugepages-test": 5000}), expected=True),
    dict(resource1=R(milli_cpu=4000, memory=8000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(milli_cpu=8000, memory=8000, scalars={"scalar.test/scalar1": 4000, "hugepages-test": 5000}), expected=True),
    dict(resource1=R(milli_cpu=4000, memory=4000, scalars={"scalar.test/scalar1": 4000, "hugepages-test": 2000}), resource2=R(milli_cpu=8000, memory=8000, scalars={"scalar.test/scalar1": 4000, "hugepages-test": 5000}), expected=True),
    dict(resource1=R(milli_cpu=4000, memory=4000, scalars={"scalar.test/scalar1": 5000, "hugepages-test": 2000}), resource2=R(milli_cpu=8000, memory=8000, scalars={"scalar.test/scalar1": 4000, "hugepages-test": 5000}), expected=False),
    dict(resource1=R(milli_cpu=9000, memory=4000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(milli_cpu=8000, memory=8000, scalars={"scalar.test/scalar1": 4000, "hugepages-test": 5000}), expected=False),
]

LESS_EQUAL_INFINITY = [
    dict(resource1=R(), resource2=R(), expected=True),
    dict(resource1=R(), resource2=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), expected=False),
    dict(resource1=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(), expected=False),
    dict(resource1=R(milli_cpu=4000, memory=2000), resource2=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), expected=False),
    dict(resource1=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(milli_cpu=4000, memory=2000), expected=True),
]


# TestLessEqualWithDimensionAndResourcesName
LESS_EQUAL_WITH_DIMENSION_AND_RESOURCES_NAME = [
    dict(resource1=R(), resource2=R(), req=None, expectedFlag=True, expectedResourceNames=[]),
    dict(resource1=R(milli_cpu=5000, memory=4000), resource2=R(), req=None, expectedFlag=False, expectedResourceNames=["cpu", "memory",]),
    dict(resource1=R(milli_cpu=5000), resource2=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1000}), req=R(milli_cpu=1000), expectedFlag=False, expectedResourceNames=["cpu",]),
    dict(resource1=R(milli_cpu=3000, memory=3000), resource2=R(milli_cpu=4000, memory=2000), req=R(memory=1000), expectedFlag=False, expectedResourceNames=["memory",]),
    dict(resource1=R(milli_cpu=4, memory=4000), resource2=R(), req=R(), expectedFlag=True, expectedResourceNames=[]),
    dict(resource1=R(milli_cpu=4, memory=4000, scalars={"nvidia.com/gpu": 1}), resource2=R(milli_cpu=8, memory=8000), req=R(milli_cpu=4, memory=2000, scalars={"nvidia.com/gpu": 1}), expectedFlag=False, expectedResourceNames=["nvidia.com/gpu",]),
    dict(resource1=R(milli_cpu=10, memory=4000, scalars={"nvidia.com/gpu": 1}), resource2=R(milli_cpu=100, memory=8000, scalars={"nvidia.com/A100": 1}), req=R(milli_cpu=10, memory=4000, scalars={"nvidia.com/gpu": 0, "nvidia.com/A100": 1, "scalar": 1}), expectedFlag=True, expectedResourceNames=[]),
    dict(resource1=R(milli_cpu=110, memory=4000, scalars={"nvidia.com/gpu": 1, "nvidia.com/A100": 1, "scalar": 1}), resource2=R(milli_cpu=100, memory=8000, scalars={"nvidia.com/A100": 1, "scalar": 1}), req=R(memory=4000, scalars={"nvidia.com/gpu": 0, "nvidia.com/A100": 1, "scalar": 1}), expectedFlag=True, expectedResourceNames=[]),
]


# TestLessPartly and TestLessEqualPartly: the same inputs, each table its own expectation
PARTLY_ZERO = [
    dict(resource1=R(), resource2=R(), less_partly=False, less_equal_partly=True),
    dict(resource1=R(), resource2=R(milli_cpu=2000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), less_partly=True, less_equal_partly=True),
    dict(resource1=R(milli_cpu=2000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(), less_partly=False, less_equal_partly=False),
    dict(resource1=R(milli_cpu=2000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), less_partly=True, less_equal_partly=True),
    dict(resource1=R(milli_cpu=2000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(milli_cpu=2000, memory=4000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), less_partly=True, less_equal_partly=True),
    dict(resource1=R(milli_cpu=2000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(milli_cpu=2000, memory=2000, scalars={"scalar.test/scalar1": 2000, "hugepages-test": 2000}), less_partly=True, less_equal_partly=True),
    dict(resource1=R(milli_cpu=2000, memory=2000, scalars={"hugepages-test": 2000}), resource2=R(milli_cpu=2000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), less_partly=True, less_equal_partly=True),
    dict(resource1=R(milli_cpu=4000, memory=4000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(milli_cpu=2000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), less_partly=False, less_equal_partly=True),
    dict(resource1=R(milli_cpu=2000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(milli_cpu=2000, memory=2000, scalars={"hugepages-test": 2000}), less_partly=False, less_equal_partly=True),
]

PARTLY_INFINITY = [
    dict(resource1=R(milli_cpu=2000, memory=2000, scalars={"hugepages-test": 2000}), resource2=R(milli_cpu=2000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), less_partly=False, less_equal_partly=True),
    dict(resource1=R(milli_cpu=2000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(milli_cpu=2000, memory=2000, scalars={"hugepages-test": 2000}), less_partly=True, less_equal_partly=True),
]


# TestLessEqualPartlyWithDimension
LESS_EQUAL_PARTLY_WITH_DIMENSION = [
    dict(r=R(milli_cpu=1000), rr=R(milli_cpu=2000), req=None, wantBool=False, wantNames=[]),
    dict(r=R(milli_cpu=3000), rr=R(milli_cpu=2000), req=R(milli_cpu=4000), wantBool=False, wantNames=[]),
    dict(r=R(milli_cpu=1000), rr=R(milli_cpu=2000), req=R(milli_cpu=500), wantBool=True, wantNames=["cpu",]),
    dict(r=R(memory=1024), rr=R(memory=1024), req=R(memory=512), wantBool=True, wantNames=["memory",]),
    dict(r=R(scalars={"nvidia.com/gpu": 2}), rr=R(scalars={"nvidia.com/gpu": 4}), req=R(scalars={"nvidia.com/gpu": 1}), wantBool=True, wantNames=["nvidia.com/gpu",]),
    dict(r=R(scalars={"nvidia.com/gpu": 4}), rr=R(scalars={"nvidia.com/gpu": 4}), req=R(scalars={"nvidia.com/gpu": 2}), wantBool=True, wantNames=["nvidia.com/gpu",]),
    dict(r=R(milli_cpu=3000, memory=2048, scalars={"nvidia.com/gpu": 5}), rr=R(milli_cpu=2000, memory=1024, scalars={"nvidia.com/gpu": 4}), req=R(milli_cpu=1000, memory=512, scalars={"nvidia.com/gpu": 1}), wantBool=False, wantNames=[]),
    dict(r=R(scalars={"rdma": 2, "fpga": 2}), rr=R(scalars={"rdma": 2}), req=R(milli_cpu=1000, memory=512, scalars={"rdma": 1, "fpga": 1, "nvidia.com/gpu": 2}), wantBool=True, wantNames=["cpu", "memory", "rdma", "nvidia.com/gpu",]),
    dict(r=R(scalars={"rdma": 1, "fpga": 2, "nvidia.com/gpu": 2}), rr=R(scalars={"rdma": 2, "fpga": 2}), req=R(milli_cpu=1000, memory=512, scalars={"nvidia.com/gpu": 2, "rdma": 1, "fpga": 1}), wantBool=True, wantNames=["cpu", "memory", "rdma", "fpga",]),
]


# TestLessEqualPartlyWithDimensionZeroFiltered
LESS_EQUAL_PARTLY_WITH_DIMENSION_ZERO_FILTERED = [
    dict(r=R(milli_cpu=0, memory=0), rr=R(milli_cpu=0, memory=0), req=R(milli_cpu=1000, memory=512), wantBool=False, wantNames=[]),
    dict(r=R(milli_cpu=1000, memory=0), rr=R(milli_cpu=2000, memory=0), req=R(milli_cpu=1000, memory=512), wantBool=True, wantNames=["cpu",]),
    dict(r=R(milli_cpu=0, memory=0), rr=R(milli_cpu=0, memory=2048), req=R(milli_cpu=1000, memory=512), wantBool=True, wantNames=["memory",]),
    dict(r=R(milli_cpu=1000, memory=1024), rr=R(milli_cpu=2000, memory=2048), req=R(milli_cpu=1000, memory=512), wantBool=True, wantNames=["cpu", "memory",]),
    dict(r=R(milli_cpu=0, memory=1024), rr=R(milli_cpu=2000, memory=0, scalars={"nvidia.com/gpu": 4}), req=R(milli_cpu=1000, memory=512, scalars={"nvidia.com/gpu": 2}), wantBool=True, wantNames=["cpu", "nvidia.com/gpu",]),
    dict(r=R(scalars={"rdma": 2, "fpga": 2}), rr=R(scalars={"rdma": 2}), req=R(milli_cpu=1000, memory=512, scalars={"nvidia.com/gpu": 2, "rdma": 1, "fpga": 1}), wantBool=True, wantNames=["rdma",]),
    dict(r=R(scalars={"rdma": 1, "fpga": 2, "nvidia.com/gpu": 2}), rr=R(scalars={"rdma": 2, "fpga": 2}), req=R(milli_cpu=1000, memory=512, scalars={"nvidia.com/gpu": 2, "rdma": 1, "fpga": 1}), wantBool=True, wantNames=["rdma", "fpga",]),
]


# TestGreaterPartlyWithDimension
GREATER_PARTLY_WITH_DIMENSION = [
    dict(name="nil req returns false", r=R(milli_cpu=1000), rr=R(milli_cpu=500), req=None, wantBool=False, wantNames=[]),
    dict(name="cpu greater", r=R(milli_cpu=2000), rr=R(milli_cpu=1000), req=R(milli_cpu=1000), wantBool=True, wantNames=["cpu",]),
    dict(name="scalar resource greater", r=R(scalars={"nvidia.com/gpu": 2}), rr=R(scalars={"nvidia.com/gpu": 1}), req=R(scalars={"nvidia.com/gpu": 1}), wantBool=True, wantNames=["nvidia.com/gpu",]),
    dict(name="cpu and memory, both greater", r=R(milli_cpu=2000, memory=2048), rr=R(milli_cpu=1000, memory=1024), req=R(milli_cpu=1000, memory=1024), wantBool=True, wantNames=["cpu", "memory",]),
    dict(name="memory greater but not requested", r=R(milli_cpu=1000, memory=2048), rr=R(milli_cpu=1000, memory=1024), req=R(milli_cpu=1000), wantBool=False, wantNames=[]),
    dict(name="nothing greater", r=R(milli_cpu=1000, memory=1024), rr=R(milli_cpu=2000, memory=2048), req=R(milli_cpu=1000, memory=1024), wantBool=False, wantNames=[]),
]


# TestGreaterPartlyWithRelevantDimensions
GREATER_PARTLY_WITH_RELEVANT_DIMENSIONS = [
    dict(name="nil req returns false", r=R(milli_cpu=1000), rr=R(milli_cpu=500), req=None, wantBool=False, wantNames=[]),
    dict(name="cpu greater, rr has cpu", r=R(milli_cpu=2000), rr=R(milli_cpu=1000), req=R(milli_cpu=1000), wantBool=True, wantNames=["cpu",]),
    dict(name="cpu greater, rr has no cpu (should be ignored)", r=R(milli_cpu=2000), rr=R(), req=R(milli_cpu=1000), wantBool=False, wantNames=[]),
    dict(name="scalar resource greater, rr has scalar", r=R(scalars={"nvidia.com/gpu": 2}), rr=R(scalars={"nvidia.com/gpu": 1}), req=R(scalars={"nvidia.com/gpu": 1}), wantBool=True, wantNames=["nvidia.com/gpu",]),
    dict(name="scalar resource greater, rr does not have scalar (should be ignored)", r=R(scalars={"nvidia.com/gpu": 2}), rr=R(), req=R(scalars={"nvidia.com/gpu": 1}), wantBool=False, wantNames=[]),
    dict(name="cpu and memory, only memory greater and present in rr", r=R(milli_cpu=1000, memory=2048), rr=R(milli_cpu=1000, memory=1024), req=R(milli_cpu=1000, memory=1024), wantBool=True, wantNames=["memory",]),
    dict(name="nothing greater", r=R(milli_cpu=1000, memory=1024), rr=R(milli_cpu=2000, memory=2048), req=R(milli_cpu=1000, memory=1024), wantBool=False, wantNames=[]),
]


# TestEqual
EQUAL = [
    dict(resource1=R(), resource2=R(), expected=True),
    dict(resource1=R(milli_cpu=2000, memory=2000, scalars={}), resource2=R(milli_cpu=2000, memory=2000, scalars={"scalar.test/scalar1": 0}), expected=True),
    dict(resource1=R(milli_cpu=2000, memory=2000, scalars={"hugepages-test": 2000}), resource2=R(milli_cpu=2000, memory=2000, scalars={"hugepages-test": 2000}), expected=True),
    dict(resource1=R(), resource2=R(milli_cpu=2000, memory=4000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), expected=False),
]


# TestMinDimensionResourceZero
MIN_DIMENSION_RESOURCE_ZERO = [
    dict(resource1=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1, "hugepages-test": 2}), resource2=R(milli_cpu=3000, memory=2000, scalars={"scalar.test/scalar1": 0, "hugepages-test": 0}), expected=R(milli_cpu=3000, memory=2000, scalars={"scalar.test/scalar1": 0, "hugepages-test": 0})),
    dict(resource1=R(milli_cpu=4000, memory=4000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(milli_cpu=5000, memory=2000, scalars={"scalar.test/scalar1": 0, "hugepages-test": 3000}), expected=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 0, "hugepages-test": 2000})),
    dict(resource1=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1, "hugepages-test": 2}), resource2=R(milli_cpu=3000, memory=2000, scalars={"scalar.test/scalar1": 0}), expected=R(milli_cpu=3000, memory=2000, scalars={"scalar.test/scalar1": 0, "hugepages-test": 0})),
    dict(resource1=R(milli_cpu=4000, memory=4000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(milli_cpu=sys.float_info.max, memory=2000), expected=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 0, "hugepages-test": 0})),
]


# TestMinDimensionResourceInfinity
MIN_DIMENSION_RESOURCE_INFINITY = [
    dict(resource1=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1, "hugepages-test": 2}), resource2=R(milli_cpu=3000, memory=2000, scalars={"scalar.test/scalar1": 0}), expected=R(milli_cpu=3000, memory=2000, scalars={"scalar.test/scalar1": 0, "hugepages-test": 2})),
    dict(resource1=R(milli_cpu=4000, memory=4000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(milli_cpu=sys.float_info.max, memory=2000), expected=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000})),
]


# TestResource_LessEqualResource
LESS_EQUAL_RESOURCE_ZERO = [
    dict(resource1=R(), resource2=R(), expected=[]),
    dict(resource1=R(), resource2=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), expected=[]),
    dict(resource1=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(), expected=["cpu", "memory", "scalar.test/scalar1", "hugepages-test",]),
    dict(resource1=R(milli_cpu=4000, memory=4000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(milli_cpu=8000, memory=8000, scalars={"scalar.test/scalar1": 4000, "hugepages-test": 5000}), expected=[]),
    dict(resource1=R(milli_cpu=4000, memory=8000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(milli_cpu=8000, memory=8000, scalars={"scalar.test/scalar1": 4000, "hugepages-test": 5000}), expected=[]),
    dict(resource1=R(milli_cpu=4000, memory=4000, scalars={"scalar.test/scalar1": 4000, "hugepages-test": 2000}), resource2=R(milli_cpu=8000, memory=8000, scalars={"scalar.test/scalar1": 4000, "hugepages-test": 5000}), expected=[]),
    dict(resource1=R(milli_cpu=4000, memory=4000, scalars={"scalar.test/scalar1": 5000, "hugepages-test": 2000}), resource2=R(milli_cpu=8000, memory=8000, scalars={"scalar.test/scalar1": 4000, "hugepages-test": 5000}), expected=["scalar.test/scalar1",]),
    dict(resource1=R(milli_cpu=9000, memory=4000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(milli_cpu=8000, memory=8000, scalars={"scalar.test/scalar1": 4000, "hugepages-test": 5000}), expected=["cpu",]),
]

LESS_EQUAL_RESOURCE_INFINITY = [
    dict(resource1=R(), resource2=R(), expected=[]),
    dict(resource1=R(), resource2=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), expected=[]),
    dict(resource1=R(milli_cpu=4000, memory=2000, scalars={"scalar.test/scalar1": 1000, "hugepages-test": 2000}), resource2=R(), expected=["cpu", "memory",]),
]


# TestResource_GreaterPartly
GREATER_PARTLY = [
    dict(name="missing parent scalar key with zero child value", child=R(scalars={"vendor.com/gpu-x": 0}), parent=R(), expectedExceeds=False, expectedResources=[]),
    dict(name="missing parent scalar key with positive child value", child=R(scalars={"vendor.com/gpu-x": 8}), parent=R(), expectedExceeds=False, expectedResources=[]),
    dict(name="shared scalar key where child exceeds parent", child=R(scalars={"vendor.com/gpu-x": 8}), parent=R(scalars={"vendor.com/gpu-x": 4}), expectedExceeds=True, expectedResources=["vendor.com/gpu-x",]),
    dict(name="cpu exceeds parent", child=R(milli_cpu=8000), parent=R(milli_cpu=4000), expectedExceeds=True, expectedResources=["cpu",]),
]


def _fields(res: Resource) -> tuple:
    """What Go's equality.Semantic.DeepEqual compares (a nil scalar map differs from an empty one)."""
    return res.milli_cpu, res.memory, res.scalars


def _requested(rows: list[dict]) -> list[dict]:
    return [row for row in rows if row["req"] is not None]


@pytest.mark.parametrize("row", SET_MAX_RESOURCE)
def test_set_max_resource(row):
    """TestSetMaxResource: Resource.set_max is SetMaxResource (policies: max_resource)."""
    assert _fields(row["resource1"].clone().set_max(row["resource2"])) == _fields(row["expected"])


@pytest.mark.parametrize("row", IS_ZERO)
def test_is_zero(row):
    assert row["resource"].is_zero(row["resourceName"]) is row["expected"]


@pytest.mark.parametrize("row", SUB_RESOURCE)
def test_sub_resource(row):
    assert _fields(row["resource1"].clone().sub(row["resource2"])) == _fields(row["expected"])


@pytest.mark.parametrize("mode, row", [(ZERO, row) for row in DIFF_ZERO] + [(INFINITY, row) for row in DIFF_INFINITY])
def test_diff(mode, row):
    """TestDiff: with Infinity a scalar one side lacks is -1 (unbounded) on the other side's part."""
    increased, decreased = diff(row["resource1"], row["resource2"], mode)
    assert (_fields(increased), _fields(decreased)) == (_fields(row["expectedIncreased"]), _fields(row["expectedDecreased"]))


def _moded(zero: list[dict], infinity: list[dict]) -> list[tuple[str, dict]]:
    return [(ZERO, row) for row in zero] + [(INFINITY, row) for row in infinity]


@pytest.mark.parametrize("compare, mode, row",
                         [(less, *case) for case in _moded(LESS_ZERO, LESS_INFINITY)]
                         + [(less_equal, *case) for case in _moded(LESS_EQUAL_ZERO, LESS_EQUAL_INFINITY)])
def test_less_and_less_equal(compare, mode, row):
    """TestLess, TestLessEqual: a scalar missing from one side is 0 (Zero) or unbounded (Infinity)."""
    assert compare(row["resource1"], row["resource2"], mode) is row["expected"]


@pytest.mark.parametrize("compare, mode, row", [(compare, *case) for case in _moded(PARTLY_ZERO, PARTLY_INFINITY)
                                                for compare in (less_partly, less_equal_partly)])
def test_less_partly_and_less_equal_partly(compare, mode, row):
    """TestLessPartly, TestLessEqualPartly: some dimension below (within epsilon for the latter)."""
    assert compare(row["resource1"], row["resource2"], mode) is row[compare.__name__]


@pytest.mark.parametrize("row", LESS_EQUAL_WITH_DIMENSION_AND_RESOURCES_NAME)
def test_less_equal_with_dimension_and_resources_name(row):
    """TestLessEqualWithDimensionAndResourcesName (policies: within_requested / exceeding_requested)."""
    assert less_equal_with_dimension(row["resource1"], row["resource2"], row["req"]) == (
        row["expectedFlag"], row["expectedResourceNames"])


@pytest.mark.parametrize("compare, row",
                         [(less_equal_partly_with_dimension, row) for row in _requested(LESS_EQUAL_PARTLY_WITH_DIMENSION)]
                         + [(less_equal_partly_with_dimension_zero_filtered, row)
                            for row in _requested(LESS_EQUAL_PARTLY_WITH_DIMENSION_ZERO_FILTERED)])
def test_less_equal_partly_with_dimension(compare, row):
    """TestLessEqualPartlyWithDimension and ...ZeroFiltered (policies: within_partly_requested and
    within_partly_requested_nonzero, which answer the flag; the names are the rows' comment)."""
    assert compare(row["r"], row["rr"], row["req"]) is row["wantBool"]


@pytest.mark.parametrize("above, row",
                         [(greater_partly_with_dimension, row) for row in _requested(GREATER_PARTLY_WITH_DIMENSION)]
                         + [(greater_partly_relevant, row) for row in _requested(GREATER_PARTLY_WITH_RELEVANT_DIMENSIONS)])
def test_greater_partly_with_dimension(above, row):
    """TestGreaterPartlyWithDimension and TestGreaterPartlyWithRelevantDimensions (policies:
    above_requested, above_relevant): the flag is whether any name is returned."""
    names = above(row["r"], row["rr"], row["req"])
    assert (bool(names), sorted(names)) == (row["wantBool"], sorted(row["wantNames"]))


@pytest.mark.parametrize("above, expected", [(greater_partly_with_dimension, ["cpu", "nvidia.com/gpu"]),
                                             (greater_partly_relevant, [])])
def test_greater_partly_against_no_resource_compares_with_empty(above, expected):
    """GreaterPartlyWithDimension and ...RelevantDimensions read a nil rr as EmptyResource()
    (resource_info.go): every requested dimension above 0 exceeds it (memory is not requested),
    while the relevant form keeps only dimensions rr sets, so none."""
    held = R(2000, 1024, {"nvidia.com/gpu": 1000})
    assert above(held, None, R(1000, 0, {"nvidia.com/gpu": 1000})) == expected


@pytest.mark.parametrize("row", EQUAL)
def test_equal(row):
    assert equal(row["resource1"], row["resource2"]) is row["expected"]


@pytest.mark.parametrize("mode, row", _moded(MIN_DIMENSION_RESOURCE_ZERO, MIN_DIMENSION_RESOURCE_INFINITY))
def test_min_dimension_resource(mode, row):
    """TestMinDimensionResourceZero / ...Infinity (policies: min_dimension)."""
    assert _fields(row["resource1"].clone().min_dimension(row["resource2"], mode)) == _fields(row["expected"])


@pytest.mark.parametrize("mode, row", _moded(LESS_EQUAL_RESOURCE_ZERO, LESS_EQUAL_RESOURCE_INFINITY))
def test_less_equal_resource_names(mode, row):
    """TestResource_LessEqualResource: the names LessEqualWithResourcesName fails on (policies: insufficient)."""
    assert sorted(less_equal_with_names(row["resource1"], row["resource2"], mode)[1]) == sorted(row["expected"])


@pytest.mark.parametrize("row", GREATER_PARTLY)
def test_greater_partly(row):
    """TestResource_GreaterPartly: GreaterPartly(parent, Infinity) is not LessEqualWithResourcesName,
    with its names (capacity's hierarchy check of a child's capability)."""
    fits, names = less_equal_with_names(row["child"], row["parent"], INFINITY)
    assert (not fits, sorted(names)) == (row["expectedExceeds"], sorted(row["expectedResources"]))


def test_new_resource():
    """TestNewResource: cpu in millicores, memory in bytes, every scalar (hugepages and
    ephemeral-storage included) in milli-units; an empty list gives an empty vector."""
    assert _fields(Resource.from_list({})) == _fields(R())
    loaded = Resource.from_list({"cpu": "4m", "memory": "2000", "scalar.test/scalar1": "1", "hugepages-test": "2",
                                 "ephemeral-storage": "3"})
    assert _fields(loaded) == _fields(R(4, 2000, {"scalar.test/scalar1": 1000, "hugepages-test": 2000,
                                                  "ephemeral-storage": 3000}))


@pytest.mark.parametrize("row", ADD_RESOURCE)
def test_add_resource(row):
    assert _fields(row["resource1"].clone().add(row["resource2"])) == _fields(row["expected"])
    assert _fields(row["resource1"] + row["resource2"]) == _fields(row["expected"])


@pytest.mark.parametrize("ignored, row", [((), row) for row in INTERSECTION]
                         + [(("pods",), row) for row in INTERSECTION_WITH_IGNORED_SCALAR_RESOURCES])
def test_intersection(ignored, row):
    """TestIntersection / ...WithIgnoredScalarResources: the names both sides hold at 0.1 or more,
    read from ``names`` (resource_names) as capacity.policy's common_dimensions reads them."""
    both = [name for name in row["r1"].resource_names() if name in row["r2"].resource_names() and name not in ignored]
    assert sorted(both) == sorted(row["want"])
