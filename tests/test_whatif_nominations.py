"""status.nominatedNodeName as Volcano writes it at a session's close, and as a replay applies it.

The job updater (framework/job_updater.go, cache.go RecordJobStatusEvent) asks
JobInfo.TaskSchedulingReason (api/job_info.go) for each allocated, pending or pipelined task:
it names a node only where the task's last transaction -- the one a discarded statement left
(Statement.Discard, GenerateLastTxContext), else its current one -- pipelined it after an
eviction.  A task pipelined onto resources that are being released anyway gets no node.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fumarole.runtime.api.model import PENDING, PIPELINED, RELEASING, Task
from fumarole.runtime.bundles.bundle import bundle_from_volcano_conf
from fumarole.runtime.framework.statement import SavedOperations, Statement
from fumarole.runtime.whatif import clock
from fumarole.runtime.whatif.clock import ReplayOptions, replay
from fumarole.runtime.whatif.live import LiveCluster
from fumarole.runtime.whatif.trace import load_trace

ROOT = Path(__file__).resolve().parent.parent
RECLAIM = ROOT / "examples" / "two-queues" / "volcano-scheduler.conf"


def _replayed(monkeypatch, trace: str):
    """Each session's (instant, pipelined pods, nominations) and every node written to a pod."""
    sessions, written = [], []
    applied, nominate = clock._apply, LiveCluster.nominate

    def spy_apply(decisions, live, now, *args, **kwargs):
        pipelined = sorted(key for tasks in decisions.pipelined.values() for key, _node in tasks)
        sessions.append((now, pipelined, dict(decisions.nominations)))
        applied(decisions, live, now, *args, **kwargs)

    def spy_nominate(live, key, node):
        written.append((key, node))
        nominate(live, key, node)

    monkeypatch.setattr(clock, "_apply", spy_apply)
    monkeypatch.setattr(LiveCluster, "nominate", spy_nominate)
    run = replay(load_trace(ROOT / "tests" / "whatif" / trace), bundle_from_volcano_conf(RECLAIM),
                 ReplayOptions(grace=30.0))
    return run, sessions, written


def test_only_the_task_pipelined_after_an_eviction_is_nominated(monkeypatch):
    run, sessions, written = _replayed(monkeypatch, "nominate-after-eviction.yaml")
    by_time = {now: (pipelined, nominations) for now, pipelined, nominations in sessions}
    # reclaim pipelines serving where it evicted; allocate pipelines extra onto the releasing CPUs.
    assert set(written) == {("prod/serving", "node-1")}
    assert by_time[600.0] == (["prod/serving"], {"prod/serving": "node-1"})
    assert by_time[605.0] == (["prod/extra", "prod/serving"], {})
    started = {j["job"]: j["started"] for j in run.jobs}
    assert (started["prod/serving"], started["prod/extra"]) == (630.0, 630.0)


def test_a_discarded_reclaim_leaves_the_node_it_pipelined_to_nominated(monkeypatch):
    _run, sessions, written = _replayed(monkeypatch, "nominate-discarded-reclaim.yaml")
    # Nothing stays pipelined and nothing is evicted, yet serving-0 gets the node.
    assert set(written) == {("prod/serving-0", "node-1")}
    assert next(s for s in sessions if s[0] == 600.0) == (600.0, [], {"prod/serving-0": "node-1"})


class _Session:
    """The session operations a statement needs, on plain tasks."""

    nodes: dict = {}

    def place(self, task, node, status):
        task.status, task.node_name = status, node
        return True

    def undo_placement(self, task, on_node=True):
        task.status, task.node_name = PENDING, ""

    def evict_in_session(self, task):
        task.status = RELEASING

    def unevict(self, task):
        task.status = "Running"

    def record_eviction(self, task, reason):
        pass

    def bind(self, task):
        pass


def _task() -> Task:
    task = Task.__new__(Task)
    task.status, task.node_name, task.eviction_occurred, task.last_transaction = PENDING, "", False, None
    return task


@pytest.mark.parametrize("evicted", [True, False])
def test_discard_keeps_the_transaction_and_commit_forgets_it(evicted):
    ssn, task = _Session(), _task()
    stmt = Statement(ssn)
    stmt.pipeline(task, "n1", evicted)
    stmt.discard()
    assert (task.status, task.last_transaction) == (PENDING, (PIPELINED, "n1", evicted))
    stmt = Statement(ssn)
    stmt.pipeline(task, "n2", False)
    stmt.commit()
    assert (task.status, task.node_name, task.last_transaction) == (PIPELINED, "n2", None)


def test_recovered_operations_carry_the_last_transaction_their_tasks_had_when_saved():
    ssn, task = _Session(), _task()
    ssn.nodes = {"n1": "n1"}
    stmt = Statement(ssn)
    stmt.pipeline(task, "n1", True)
    saved = SavedOperations.of([stmt])
    stmt.discard()
    assert task.last_transaction == (PIPELINED, "n1", True)
    assert Statement(ssn).recover(saved)
    assert (task.status, task.last_transaction) == (PIPELINED, None)
