"""The bool combinators answer as Volcano's dispatchers do whatever the number of plugins.

``all`` / ``any`` / ``first-tier-all`` / ``first-failure`` take shortcuts when a hook has no
plugin or one (runtime/framework/dispatch.py); these tests pin their answers, their
short-circuit order (a plugin after the deciding one is not asked) and that a plugin's truthy
answer comes back as a plain bool.
"""

from __future__ import annotations

import itertools

import pytest

from fumarole.runtime.framework import dispatch


def _plugins(answers: list, asked: list) -> list:
    def plugin(i: int, answer):
        def ask(*args):
            asked.append((i, args))
            return answer
        return ask
    return [plugin(i, a) for i, a in enumerate(answers)]


@pytest.mark.parametrize("answers", [list(p) for n in range(4) for p in itertools.product([True, False], repeat=n)])
def test_all_and_any_fold_every_plugin_in_order_and_stop_at_the_decider(answers: list[bool]):
    for build, fold, nobody in ((dispatch.all_, all, True), (dispatch.any_, any, False)):
        asked: list = []
        fn = build([_plugins(answers[:1], asked), _plugins(answers[1:], asked)][: 2 if answers else 1])
        got = fn("queue", "task")
        assert got is (fold(answers) if answers else nobody)
        decider = next((i for i, a in enumerate(answers) if a != nobody), len(answers) - 1)
        assert len(asked) == (decider + 1 if answers else 0)
        assert all(args == ("queue", "task") for _i, args in asked)


def test_one_plugin_answers_a_plain_bool():
    assert dispatch.all_([[lambda *a: 1]])() is True
    assert dispatch.all_([[lambda *a: []]])() is False
    assert dispatch.any_([[lambda *a: "yes"]])() is True


def test_first_tier_all_asks_only_the_first_tier_with_a_plugin():
    asked: list = []
    fn = dispatch.first_tier_all([[], _plugins([True], asked), _plugins([False], asked)])
    assert fn("job") is True and [i for i, _ in asked] == [0]
    assert dispatch.first_tier_all([[], []])("job") is False


def test_first_failure_with_one_plugin_returns_its_answer():
    failure = object()
    assert dispatch.first_failure([[], [lambda t, n: failure]])("t", "n") is failure
    assert dispatch.first_failure([[lambda t, n: None]])("t", "n") is None
    assert dispatch.first_failure([])("t", "n") is None
