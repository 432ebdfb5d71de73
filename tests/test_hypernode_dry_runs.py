"""Allocate's HyperNode search: what its dry runs cost, with Volcano's decisions unchanged."""

from __future__ import annotations

import pytest

from benchmarks.shapes import cluster_objects
from fumarole.runtime.framework.statement import Statement
from tests.differential import decisions_and_questions


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_sub_job_with_one_hyper_node_to_try_keeps_its_dry_run(monkeypatch, engine):
    """Volcano tries a sub-job in each HyperNode of its gradient, discards every dry run, scores
    the HyperNodes and redoes the best one's operations.  A sub-job of a job without sub-group
    policies has one HyperNode to try (the job's), so allocate scores it first and keeps the dry
    run: the only operations redone are those of the HyperNode each job turn chose, once per turn
    (before, once more for each HyperNode where the sub-job fit)."""
    redone: list[int] = []
    recover = Statement.recover

    def counting(self, saved):
        redone.append(len(saved.operations))
        return recover(self, saved)
    monkeypatch.setattr(Statement, "recover", counting)
    placed, turns = decisions_and_questions(cluster_objects(30, "hypernodes"), "topology-aware", engine,
                                            "hyper_node_gradient_for_job", "", True, phase="allocate")
    assert turns == 4  # the shape's pending jobs with a hard network topology, one turn each
    assert redone == [10] * turns  # each places its ten pods in one leaf (before: 13 redos)
    assert len(placed["binds"]) == 190
