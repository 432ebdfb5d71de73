"""Hypothesis over the front doors this page of rules guards: patterns, JSON bodies, API replies, admin headers."""

from __future__ import annotations

import json
import time

import pytest
from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.api.go_regexp import MAX_PATTERN_CHARS, PatternError, compile_go_regexp, go_match_string
from fumarole.runtime.ingest import snapshot
from fumarole.runtime.ingest.strict_json import strict_json
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

BOUNDED = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
REGEX_ALPHABET = st.sampled_from(list("a()[]{}|*+?^$.\\-,0123456789dDwWsSbBCpPLN:<>=!P_") + ["(?i)", "\\pL", "a+"])
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner,
                                                                                        max_size=4), max_leaves=20)


@BOUNDED
@given(st.lists(REGEX_ALPHABET, max_size=40).map("".join), st.text(max_size=200))
def test_a_pattern_compiles_or_is_refused_with_a_reason_and_matches_in_bounded_time(pattern, name):
    try:
        compiled = compile_go_regexp(pattern)
    except PatternError as exc:
        assert str(exc)
        return
    started = time.perf_counter()
    assert go_match_string(compiled, name * 50) in (True, False)
    assert time.perf_counter() - started < 1


@BOUNDED
@given(st.integers(min_value=MAX_PATTERN_CHARS + 1, max_value=MAX_PATTERN_CHARS * 4))
def test_a_pattern_over_the_cap_is_refused_before_compiling(length):
    with pytest.raises(PatternError, match="fumarole accepts at most 1024"):
        compile_go_regexp("a" * length)


@BOUNDED
@given(JSON_VALUES)
def test_strict_json_reads_what_json_writes(value):
    assert strict_json(json.dumps(value)) == value


@BOUNDED
@given(st.dictionaries(st.text(min_size=1, max_size=4), JSON_VALUES, min_size=1, max_size=4), st.data())
def test_a_key_twice_is_refused_wherever_it_is(mapping, data):
    key = data.draw(st.sampled_from(sorted(mapping)))
    text = json.dumps(mapping)[:-1] + f", {json.dumps(key)}: 1}}"
    with pytest.raises(FumaroleError) as refused:
        strict_json(text)
    [d] = refused.value.diagnostics
    assert d.code == "K001" and "duplicate key" in d.message


@BOUNDED
@given(st.text(alphabet="[]{}\":,0123456789 tfnaeul\\", max_size=300))
def test_any_text_is_a_document_or_one_k001(text):
    try:
        strict_json(text)
    except FumaroleError as err:
        assert [d.code for d in err.diagnostics] == ["K001"]


@BOUNDED
@given(JSON_VALUES)
def test_any_list_reply_is_items_or_one_failure(reply):
    try:
        items, token = snapshot._page(reply, "/api/v1/nodes")
    except snapshot._Failure as failure:
        assert str(failure).startswith("the reply to GET /api/v1/nodes ")
        return
    assert all(isinstance(item.get("metadata"), dict) for item in items) and isinstance(token, str)
