"""The nodegroup plugin's volcano.sh/nodegroup-resource-limits annotation, read as Volcano's
parseNodeGroupResourceLimits reads it: Go's json.Unmarshal into a map of resource lists, each
quantity through Quantity.UnmarshalJSON.  Anything Go refuses makes the queue's limits invalid
(every node then refuses its tasks); nothing the annotation holds raises."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fumarole.runtime.api.constraints import NODE_GROUP_LIMITS, node_group_limits


def _limits(text: str | None):
    return node_group_limits(SimpleNamespace(annotations={} if text is None else {NODE_GROUP_LIMITS: text}))


@pytest.mark.parametrize("text, cpu, memory, names", [
    ('{"g": {"cpu": "3", "memory": "8Gi"}}', 3000, 8 * 1024 ** 3, ("cpu", "memory")),
    ('{"g": {"cpu": " 2 "}}', 2000, 0, ("cpu",)),  # UnmarshalJSON trims spaces around the text
    ('{"g": {"cpu": 1.5}}', 1500, 0, ("cpu",)),  # a bare number is parsed from its text
    ('{"g": {"cpu": null}}', 0, 0, ("cpu",)),  # null is a zero quantity, and still names cpu
    ('{"g": {"memory": 1.0000000000000001}}', 0, 2, ("memory",)),  # exact, then Value() rounds up
    ('{"g": null}', 0, 0, ()),
])
def test_a_group_limit_is_each_quantity_as_go_reads_it(text, cpu, memory, names):
    limits = _limits(text)
    assert limits.valid and limits.limited("g")
    assert (limits.limits["g"].milli_cpu, limits.limits["g"].memory, limits.names["g"]) == (cpu, memory, names)


@pytest.mark.parametrize("text", [None, "", "null"])
def test_no_annotation_an_empty_one_or_json_null_limits_nothing(text):
    limits = _limits(text)
    assert limits.valid and not limits.limited("g")


@pytest.mark.parametrize("text", [
    "[1]", '"g"', "7", '{"g": [1]}', '{"g": {"cpu": true}}', '{"g": {"cpu": {}}}', '{"g": {"cpu": NaN}}',
    '{"g": {"cpu": "lots"}}', '{"g": {"cpu": "1"}', "{'g': {}}",
    "[" * 200_000 + "]" * 200_000,  # past Go's 10,000 levels, and past Python's own recursion limit
    '{"g": ' * 50_000 + "{}" + "}" * 50_000,
])
def test_what_go_refuses_makes_the_limits_invalid_without_raising(text):
    assert not _limits(text).valid


@settings(max_examples=150, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                    max_leaves=12)
       .map(json.dumps) | st.text(max_size=40))
def test_any_text_gives_limits_valid_or_not_and_never_raises(text):
    limits = _limits(text)
    assert limits.valid in (True, False)
