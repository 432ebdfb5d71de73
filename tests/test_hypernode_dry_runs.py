"""Allocate's HyperNode search: what its dry runs cost, with Volcano's decisions unchanged."""

from __future__ import annotations

import pytest

from benchmarks.shapes import cluster_objects
from fumarole.runtime.framework.statement import Statement
from tests.differential import decisions_and_questions


def _redone(monkeypatch, config: str, engine: str) -> tuple[list[int], int, dict]:
    """How many operations each redo of saved operations (Statement.recover) replayed, how many
    job turns searched HyperNode gradients, and the decisions, on the 30-node HyperNode shape."""
    redone: list[int] = []
    recover = Statement.recover

    def counting(self, saved):
        redone.append(len(saved.operations))
        return recover(self, saved)
    monkeypatch.setattr(Statement, "recover", counting)
    placed, turns = decisions_and_questions(cluster_objects(30, "hypernodes"), config, engine,
                                            "hyper_node_gradient_for_job", "", True, phase="allocate")
    return redone, turns, placed


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_sub_job_dry_run_is_kept_and_a_job_redoes_only_the_winner_it_did_not_try_last(monkeypatch, engine):
    """Volcano tries a job (and each sub-job) in every HyperNode of a gradient, discards every dry
    run, then redoes the winner's operations.  A sub-job of a job without sub-group policies has
    one HyperNode to try, so allocate scores it first and keeps that dry run; a job's dry run that
    found a solution is discarded only when the next starts, so a winner tried last is kept.  On
    this shape (32 leaves a gradient) the four hard-topology job turns redo 3 winners of 10 pods;
    before, each turn also redid the sub-job's run in every leaf that took it (13 redos)."""
    redone, turns, placed = _redone(monkeypatch, "topology-aware", engine)
    assert turns == 4  # the shape's pending jobs with a hard network topology, one turn each
    assert redone == [10, 10, 10]
    assert len(placed["binds"]) == 190


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_gradient_of_one_hyper_node_redoes_nothing(monkeypatch, engine):
    """Without network-topology-aware a job's only gradient is the cluster top: its one dry run is
    the placement, kept as it is (before: redone twice, for the sub-job and for the job)."""
    redone, turns, placed = _redone(monkeypatch, "default", engine)
    assert turns == 4
    assert redone == []
    assert len(placed["binds"]) == 190
