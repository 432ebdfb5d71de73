"""Every case of the adversarial corpus gets the answer it must get, in its time bound."""

from __future__ import annotations

from adversarial_corpus import CORPUS, run_corpus


def test_every_hostile_input_gets_its_answer_in_bounded_time():
    outcomes = run_corpus()
    assert len(outcomes) == len(CORPUS)
    failed = [(o.case.name, o.status, round(o.seconds, 2), o.answer[:200]) for o in outcomes if not o.ok]
    assert failed == []
