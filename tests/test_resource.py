from hypothesis import given, settings
from hypothesis import strategies as st

from fumarole.runtime.api.resource import (
    INFINITY,
    ZERO,
    Resource,
    added_in_order,
    diff,
    exceeded_part,
    greater_partly_relevant,
    less,
    less_equal,
    less_equal_partly_with_dimension_zero_filtered,
    less_equal_with_dimension,
    res_max,
    share,
    within_requested_after,
)


def r(cpu=0, mem=0, **scalars) -> Resource:
    return Resource(cpu, mem, {k.replace("_", "/"): float(v) for k, v in scalars.items()} or None)


def test_from_list_units():
    res = Resource.from_list({"cpu": "1500m", "memory": "1Gi", "pods": "10", "nvidia.com/gpu": "2",
                              "count/pods": "4"})
    assert res.milli_cpu == 1500 and res.memory == 2**30
    assert res.scalars == {"pods": 10.0, "nvidia.com/gpu": 2000.0}
    assert res.max_task_num == 10


def test_less_equal_epsilon_and_modes():
    assert less_equal(r(1000.05), r(1000))
    assert not less_equal(r(1001), r(1000))
    assert not less_equal(r(0, 0, nvidia_com_gpu=1), r(10, 10), ZERO)
    assert less_equal(r(0, 0, nvidia_com_gpu=1), r(10, 10), INFINITY)
    # INFINITY: a scalar present on the right must be present on the left
    assert not less_equal(r(1, 1), r(10, 10, nvidia_com_gpu=1), INFINITY)


def test_less_is_strict_everywhere():
    assert less(r(1, 1), r(2, 2))
    assert not less(r(1, 2), r(2, 2))


def test_sub_skips_scalars_when_left_has_no_map():
    left = Resource(2000, 10)
    left.sub(r(1000, 5, pods=1))
    assert left.scalars is None and left.milli_cpu == 1000


def test_dimension_limited_comparison_ignores_pods_and_unrequested():
    ok, names = less_equal_with_dimension(r(3000, 9, pods=5), r(2000, 10, pods=1), r(0, 1, pods=1))
    assert ok and names == []
    ok, names = less_equal_with_dimension(r(3000, 9), r(2000, 10), r(1, 0))
    assert not ok and names == ["cpu"]


def test_diff_and_exceeded_part():
    inc, dec = diff(r(3, 1, pods=2), r(1, 2))
    assert (inc.milli_cpu, inc.memory, inc.scalars) == (2, 0, {"pods": 2})
    assert (dec.milli_cpu, dec.memory) == (0, 1)
    assert exceeded_part(r(5, 5), r(7, 1)).to_dict() == {"cpu": 0, "memory": 4}


def test_max_keeps_the_scalars_that_are_not_negative():
    """helpers.Max keeps a scalar at 0 (`lQuant >= 0`): capacity's reclaim weighs a scalar whose key
    the deserved map has (authored-deserved-zero-scalar-stays-relevant); a negative one is left out."""
    assert res_max(r(1, 5, a=0), r(2, 1, b=3)).to_dict() == {"cpu": 2, "memory": 5, "a": 0, "b": 3}
    assert res_max(r(1, 5, a=-1), r(2, 1, a=0, b=-2)).to_dict() == {"cpu": 2, "memory": 5, "a": 0}
    assert res_max(r(1, 5, a=-1), r(2, 1, a=-3)).scalars == {}


def test_capacity_comparisons():
    assert greater_partly_relevant(r(3, 3), r(2, 0), r(1, 1)) == ["cpu"]
    assert less_equal_partly_with_dimension_zero_filtered(r(3, 0), r(2, 0), r(1, 1)) is False


def test_share():
    assert share(0, 0) == 0 and share(1, 0) == 1 and share(1, 4) == 0.25


_amounts = st.floats(min_value=0, max_value=1e12, allow_nan=False)
_scalar_maps = st.one_of(st.none(), st.dictionaries(st.sampled_from(["pods", "nvidia.com/gpu", "x/y"]), _amounts,
                                                    max_size=3))


@st.composite
def _resources(draw) -> Resource:
    res = Resource(draw(_amounts), draw(_amounts), draw(_scalar_maps), draw(st.integers(0, 110)))
    if draw(st.booleans()):  # an attribute set directly, as with_value does, may hold an int
        res.milli_cpu = draw(st.integers(0, 10**6))
    return res


@settings(max_examples=200, deadline=None)
@given(left=_resources(), right=_resources())
def test_value_arithmetic_is_the_in_place_arithmetic_on_a_copy(left: Resource, right: Resource):
    """`a + b` and `a - b` build their result in one step; it is what Volcano's Add and Sub give
    on a clone, to the type of every figure (sub skips the scalars when the left has none), and
    shares no scalar map with either side."""
    for built, stepwise in ((left + right, left.clone().add(right)), (left - right, left.clone().sub(right))):
        assert [(v, type(v)) for v in (built.milli_cpu, built.memory)] == \
            [(v, type(v)) for v in (stepwise.milli_cpu, stepwise.memory)]
        assert (built.scalars, built.max_task_num) == (stepwise.scalars, stepwise.max_task_num)
        assert built.scalars is None or (built.scalars is not left.scalars and built.scalars is not right.scalars)


@settings(max_examples=300, deadline=None)
@given(held=_resources(), released=_resources(), request=_resources(), limit=st.one_of(st.none(), _resources()))
def test_within_requested_after_is_within_requested_of_the_sum(held: Resource, released: Resource,
                                                               request: Resource, limit: Resource | None):
    """The allocatable bounds' comparison without the vector: the same answer as building
    ``held - released + request`` and comparing it on the requested dimensions."""
    assert within_requested_after(held, released, request, limit) == \
        less_equal_with_dimension(held - released + request, limit, request)[0]


def test_within_requested_after_reads_scalars_as_sub_and_add_leave_them():
    """Sub leaves the scalars alone when the held resource has none: what is released of a scalar
    then counts for nothing."""
    two, one = r(nvidia_com_gpu=2), r(nvidia_com_gpu=1)
    assert not within_requested_after(Resource(), two, two, one)  # 0 + 2 > 1: the release is lost
    assert within_requested_after(one, two, two, one)  # 1 - 2 + 2 <= 1


@settings(max_examples=200, deadline=None)
@given(start=_resources(), terms=st.lists(st.tuples(_resources(), st.booleans()), max_size=6), data=st.data())
def test_added_in_order_is_the_chain_of_additions(start: Resource, terms: list[tuple[Resource, bool]],
                                                  data: st.DataObject):
    """``added_in_order`` gives what adding the chosen terms one by one with ``+`` gives, to the bit
    and to the type of every figure, and leaves ``start`` and the terms as they were."""
    begin = data.draw(st.integers(0, len(terms)))
    end = data.draw(st.integers(begin, len(terms)))
    vectors, adds = [t for t, _ in terms], [a for _, a in terms]
    before = [(v.milli_cpu, v.memory, dict(v.scalars or {})) for v in [start] + vectors]
    chained = start
    for i in range(begin, end):
        if adds[i]:
            chained = chained + vectors[i]
    built = added_in_order(start, vectors, adds, begin, end)
    assert [(v, type(v)) for v in (built.milli_cpu, built.memory)] == \
        [(v, type(v)) for v in (float(chained.milli_cpu), chained.memory)]
    assert (built.scalars, built.max_task_num) == (chained.scalars, chained.max_task_num)
    assert built.scalars is None or all(built.scalars is not v.scalars for v in [start] + vectors)
    assert [(v.milli_cpu, v.memory, dict(v.scalars or {})) for v in [start] + vectors] == before
