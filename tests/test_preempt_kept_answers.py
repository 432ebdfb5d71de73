"""Preempt keeps what nodes answered between preemptors (preempt.policy, `kept_for`): whether a
node's future idle and what the queue holds there cover the preemptor's init request, until
preempt tries that node or rolls back a job's evictions there, and whether the node is worth a
closer look, for the next preemptors of the same job and requests until preempt evicts, places or
rolls back.  The decisions are those of asking every node afresh for every preemptor; the
questions asked are fewer."""

from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings

from benchmarks.shapes import eviction_objects
from fumarole.runtime.bundles.bundle import build_bundle
from fumarole.runtime.bundles.library import compile_sources, standard_library_sources
from fumarole.runtime.framework.lifecycle import new_session, run_session
from fumarole.runtime.ingest.kube import cluster_from_objects
from fumarole.runtime.ingest.scheduler_config import config_from_document
from fumarole.runtime.authoring.scenario import decisions_as_expect
from tests.differential import CONFIGS, eviction_heavy_clusters

# kept_for's reuse of an earlier preemptor's answers (without it every preemptor starts afresh),
# the walk's passing over nodes known not to be covered with a look-up (without it, each is asked),
# and the screen before the scoring (without it, every preemptor that passes the queue's bound is scored).
KEEPING = "    for earlier in kept.keys():\n        return kept[earlier] when same(earlier, preemptor)\n"
PREFILTER = ("    for node in sort_by_score(scores):\n        continue when not covered.get(node, true)\n",
             "    for node in sort_by_score(scores):\n")
# The screen before the scoring: a preemptor none of whose nodes is worth trying is not scored.
SCREEN = "    return false when not any_worth_trying(preemptor, queue, feasible, sources, held, reach, covered, answers)\n"


@lru_cache(maxsize=None)
def _bundle(config: str, keeping: bool):
    """The configuration's bundle, over the standard library or over one whose preempt keeps no
    answer from one preemptor to the next, scores every preemptor's nodes and walks every scored
    node."""
    library = None
    if not keeping:
        sources = []
        for name, text in standard_library_sources():
            if name.endswith("actions/preempt.policy"):
                assert text.count(KEEPING) == 1 and text.count(PREFILTER[0]) == 1 and text.count(SCREEN) == 1, \
                    "preempt.policy's kept answers changed: update this test"
                text = text.replace(KEEPING, "").replace(*PREFILTER).replace(SCREEN, "")
            sources.append((name, text))
        library = compile_sources(sources)
    return build_bundle(config_from_document(CONFIGS[config]), library=library)


def _run(objects: list[dict], config: str, engine: str, keeping: bool) -> tuple[dict, dict]:
    """The decisions, and how often preempt asked each of its bounds."""
    asked = {"may_become_allocatable": 0, "may_preempt_from": 0}
    session = new_session(_bundle(config, keeping), cluster_from_objects(objects), now=1_800_000_000.0,
                          engine=engine)

    def count_questions() -> None:  # the session's hooks exist once it is open
        for hook in asked:
            ask = getattr(session.H, hook)

            def counting(*args, _ask=ask, _hook=hook):
                asked[_hook] += session.phase == "preempt"
                return _ask(*args)
            setattr(session.H, hook, counting)
    return decisions_as_expect(run_session(session, opened=count_questions)), asked


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_kept_answers_decide_as_asking_afresh_and_ask_less(engine):
    """The 40-node overshare shape: most preemptors of a starving job find no node, and a
    placement changes one node; the same decisions with far fewer bound questions."""
    objects = eviction_objects(40, "overshare")
    kept, asked = _run(objects, "reclaim-preempt-binpack", engine, True)
    afresh, asked_afresh = _run(objects, "reclaim-preempt-binpack", engine, False)
    assert kept == afresh and kept["evicted"]
    # Counted: 1,489 and 593 questions kept, 1,734 and 840 afresh (the screen before the scoring
    # asks may_preempt_from of the nodes it passes, to spare scoring preemptors no node would take).
    assert asked_afresh["may_become_allocatable"] > 1500 and asked_afresh["may_preempt_from"] > 600
    assert asked["may_become_allocatable"] < asked_afresh["may_become_allocatable"] * 0.9
    assert asked["may_preempt_from"] < asked_afresh["may_preempt_from"] * 0.75


@pytest.mark.parametrize("config", ["reclaim-preempt-binpack", "capacity-preempt"])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(objects=eviction_heavy_clusters())
def test_kept_answers_never_change_a_decision(config: str, objects: list[dict]):
    """Full nodes and starving jobs of several queues and priorities: what both engines decide
    with the answers kept is what preempt decides asking every node afresh."""
    afresh = decisions_as_expect(run_session(new_session(_bundle(config, False), cluster_from_objects(objects),
                                                         now=1_800_000_000.0)))
    for engine in ("fast", "reference"):
        kept = decisions_as_expect(run_session(new_session(_bundle(config, True), cluster_from_objects(objects),
                                                           now=1_800_000_000.0, engine=engine)))
        assert kept == afresh
