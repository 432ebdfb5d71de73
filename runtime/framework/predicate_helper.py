"""Volcano's predicate helper (``util/predicate_helper.go``): which nodes a task fits.

Two behaviours matter for decisions: on clusters above
``--minimum-feasible-nodes`` (100) nodes only a sample of feasible nodes is
collected, starting from a rotating index the scheduler process keeps from one
session to the next (``ProcessState.predicate_start_index``); and failures of earlier tasks of the same job and role are
remembered per helper.  Volcano evaluates nodes on 16 workers, so its result
order is random; fumarole visits them one at a time, as a single worker does,
and returns them in visiting order.  The scan ends at the first feasible node
past the sample: the worker that finds it cancels the scan, so it counts as
visited (the next scan starts after it) without being kept (other workers may
have visited a few nodes more).

In hard sharding mode (``--scheduler-sharding-mode hard``) every scan refuses
the nodes outside the scheduler's NodeShard before asking the check, as
Volcano's helper does for every action (each passes ``ssn.NodesInShard``): the
refusal is an ``Error`` status (a plain Go error), remembered in the error cache
like any other, and the refused node still counts towards the nodes visited.
"""

from __future__ import annotations

from typing import Callable, Protocol

import numpy as np

from fumarole.runtime.api.fit import ERROR, FitError, FitErrors
from fumarole.runtime.api.model import Node, Task
from fumarole.runtime.ingest.scheduler_options import DEFAULT_OPTIONS, HARD_SHARDING, SchedulerOptions
from fumarole.runtime.framework.batch_forms import BatchForm, BatchForms, EngineDisagreement, PerNodeOnly, disagreement
from fumarole.runtime.framework.go_semantics import int32
from fumarole.runtime.framework.node_columns import NodeBatch, NodeColumns, as_batch
from fumarole.runtime.framework.policy_error import NOT_RETRIED, POLICY_FAILURES
from fumarole.runtime.framework.vector_lib import memo_key


class NodeScan(Protocol):
    """Where the rotating node scan starts and how much of it to sample (the session holds both)."""

    predicate_start_index: int
    predicate_scans: int  # node scans made so far (of at least one node)
    options: SchedulerOptions
    nodes_in_shard: frozenset[str]  # Volcano's ssn.NodesInShard
    columns: NodeColumns | None  # the fast engine's node columns (None: node by node)
    node_list: list[Node]
    batch_forms: BatchForms  # the batch forms of node checks (vectorize), asked when there are columns


BASELINE_PERCENTAGE_OF_NODES_TO_FIND = 50
NOT_IN_SHARD = "node isn't in scheduler node shard"  # Volcano's words (util/predicate_helper.go)


def not_in_shard() -> FitError:
    """Hard sharding mode's refusal: a plain Go error, which FitErrors.SetNodeError records as an
    Error status (one per node, as Volcano makes one per node)."""
    return FitError([(ERROR, NOT_IN_SHARD)])


def num_feasible_nodes_to_find(total: int, options: SchedulerOptions = DEFAULT_OPTIONS) -> int:
    """CalculateNumOfFeasibleNodesToFind: how many feasible nodes end the scan, from the sampling
    options.  Volcano works in int32: the node count times a percentage wraps around when a large
    --minimum-percentage-nodes-to-find is the percentage, and the quotient truncates toward zero."""
    if total <= options.minimum_feasible_nodes or options.percentage_nodes_to_find >= 100:
        return total
    pct = options.percentage_nodes_to_find
    if pct <= 0:
        pct = max(BASELINE_PERCENTAGE_OF_NODES_TO_FIND - _go_div(total, 125),
                  options.minimum_percentage_nodes_to_find)
    return max(_go_div(int32(total * pct), 100), options.minimum_feasible_nodes)


def _go_div(a: int, b: int) -> int:
    """Go's int32 division truncates toward zero (a negative percentage option makes it matter)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


class PredicateResult:
    """The nodes a scan found, in visiting order, and the fit errors of the nodes it passed over.
    The errors are whole only for a scan that found no node (the only one whose errors Volcano's
    actions read): the fast engine leaves them out otherwise (see ``_predicate_batch``)."""

    __slots__ = ("nodes", "errors")

    def __init__(self, nodes: list, errors: FitErrors) -> None:
        self.nodes, self.errors = nodes, errors


class PredicateHelper:
    __slots__ = ("ssn", "cache", "shard")

    def __init__(self, ssn: NodeScan) -> None:
        self.ssn = ssn
        self.cache: dict[str, dict[str, FitError]] = {}
        # The only nodes a scan may find, in hard sharding mode; None: any node.
        self.shard = ssn.nodes_in_shard if ssn.options.sharding_mode == HARD_SHARDING else None

    def _refusal(self, node: Node) -> FitError | None:
        """The hard sharding mode's refusal of a node outside the shard, asked before the check."""
        if self.shard is None or node.name in self.shard:
            return None
        return not_in_shard()

    def _outside_shard(self, columns: NodeColumns) -> np.ndarray | None:
        """Per row, whether hard sharding mode refuses the node (None: it refuses none)."""
        if self.shard is None:
            return None
        mask = columns.static.get(NOT_IN_SHARD)
        if mask is None:
            shard = self.shard
            mask = columns.static[NOT_IN_SHARD] = np.array([name not in shard for name in columns.node_names],
                                                           dtype=bool)
        return mask

    def predicate_nodes(self, task: Task, nodes: list[Node],
                        check: Callable[[Task, Node], FitError | None], cache: bool) -> PredicateResult:
        ssn = self.ssn
        if not nodes:
            return PredicateResult([], FitErrors())
        ssn.predicate_scans += 1
        wanted = num_feasible_nodes_to_find(len(nodes), ssn.options)
        use_cache = cache and bool(task.role)
        key = f"{task.job_id}/{task.role}"
        cached = self.cache.get(key) if use_cache else None
        form = ssn.batch_forms.of(check)
        columns = ssn.columns
        if form is not None and columns is not None:
            batch = columns.all_batch() if nodes is ssn.node_list else as_batch(columns, nodes)
            if batch is not None:
                try:
                    return self._predicate_batch(task, nodes, batch, check, form, wanted, key, cached, use_cache)
                except NOT_RETRIED:  # a spent budget: the per-node scan would trip it at its own first step
                    raise
                except POLICY_FAILURES:
                    # The form stopped at a policy failure on some node: the scan raises it again at
                    # its policy line, or never reaches that node (the form asks beyond the sample).
                    pass
                except PerNodeOnly:  # a hook with effects: asked node by node, as the scan asks
                    pass
                except EngineDisagreement:
                    if ssn.batch_forms.checked:
                        raise
                    # The per-node answer is Volcano's: the scan gives it (docs/language.md).
        return self._predicate_per_node(task, nodes, check, wanted, key, cached, use_cache)

    def scans_every_node(self, nodes: list[Node]) -> bool:
        """Whether a scan of ``nodes`` visits every one of them: the sample it stops at
        (numFeasibleNodesToFind) is the whole list.  Such a scan leaves the rotating start at
        ``start % len(nodes)`` whatever fits (it visits ``len(nodes)`` nodes from ``start``)."""
        return num_feasible_nodes_to_find(len(nodes), self.ssn.options) == len(nodes)

    def scan_start(self) -> int:
        """Where the rotating node scan starts next."""
        return self.ssn.predicate_start_index

    def start_scans_at(self, start: int) -> None:
        """Put the rotating start where the scans of dry runs run out of order would find it."""
        self.ssn.predicate_start_index = start

    def scans_made(self) -> int:
        """How many node scans (of at least one node) the session has made so far."""
        return self.ssn.predicate_scans

    def _predicate_per_node(self, task: Task, nodes: list[Node], check: Callable[[Task, Node], FitError | None],
                            wanted: int, key: str, cached: dict[str, FitError] | None,
                            use_cache: bool) -> PredicateResult:
        """Volcano's scan, node by node from the rotating start, until a node fits past the ``wanted``
        ones: the worker that finds it cancels the scan, so it counts as visited (the next scan
        starts after it) but is not kept."""
        ssn = self.ssn
        errors = FitErrors()
        feasible: list = []
        total = len(nodes)
        start = ssn.predicate_start_index
        processed = 0
        for i in range(total):
            node = nodes[(start + i) % total]
            processed += 1
            if cached is not None and node.name in cached:
                errors.nodes[node.name] = cached[node.name]
                continue
            failure = self._refusal(node) or check(task, node)
            if failure is not None:
                errors.nodes[node.name] = failure
                if use_cache:
                    self.cache.setdefault(key, {})[node.name] = failure
                continue
            if len(feasible) >= wanted:  # the first feasible node past the sample ends the scan
                break
            feasible.append(node)
        ssn.predicate_start_index = (start + processed) % total
        return PredicateResult(feasible, errors)

    def _predicate_batch(self, task: Task, nodes: list[Node], batch: NodeBatch,
                         check: Callable[[Task, Node], FitError | None], form: BatchForm,
                         wanted: int, key: str, cached: dict[str, FitError] | None,
                         use_cache: bool) -> PredicateResult:
        """:meth:`predicate_nodes` with the check's batch form: the feasibility mask over the nodes
        in rotated order, then the first ``wanted`` feasible ones, exactly as the node-by-node scan
        visits them.  The mask is worked out a chunk at a time (enough for ``wanted`` nodes if most
        fit, then the rest): lanes are independent, so only the cost changes.  A check that is
        row-local for the task (``vectorize``: its ``row_local`` test) is read from a row memo per
        pod spec instead, and so are its fit errors.  Only the nodes that fail within the scanned
        range are checked one by one, for their fit errors, and only when something reads them:
        the scan found no node, the error cache keeps them, or the engines are checked.  (Asking
        every failing node made a scan of a task that fits a third of the cluster, as zone
        affinity does, cost in proportion to the cluster, and the session grow as its square.)"""
        ssn = self.ssn
        total = len(nodes)
        start = ssn.predicate_start_index
        turn = start % total
        base = batch.rows

        def span(lo: int, hi: int) -> np.ndarray:  # the rows at positions lo..hi, as slices where it can
            a, b = turn + lo, turn + hi
            if b <= total or a >= total:
                return base[a:b] if b <= total else base[a - total:b - total]
            return np.concatenate((base[a:], base[:b - total]))

        columns = batch.columns
        spec = self._spec_key(task, form)
        outside = self._outside_shard(columns)
        if spec is not None:
            memo = columns.memo(spec, lambda lanes: form.run(task, lanes),
                                lambda node: check(task, node) is not None, bool)

            def checked(lanes: np.ndarray) -> np.ndarray:
                return memo[lanes]
        else:
            def checked(lanes: np.ndarray) -> np.ndarray:
                return np.broadcast_to(np.asarray(form.run(task, NodeBatch(columns, lanes)), dtype=bool),
                                       (len(lanes),))

        def failing(lanes: np.ndarray) -> np.ndarray:  # the shard refuses its lanes without asking the check
            return checked(lanes) if outside is None else outside[lanes] | checked(lanes)
        skipped = None
        if cached:
            skipped = np.zeros(total, dtype=bool)
            position = np.full(len(columns.nodes), -1)
            position[base] = (np.arange(total) - turn) % total
            cached_rows = [columns.rows.get(name, -1) for name in cached]
            at = position[[r for r in cached_rows if r >= 0]]
            skipped[at[at >= 0]] = True
        # The rows in rotated order and whether each fails, a chunk at a time.
        rows = span(0, min(total, wanted + wanted // 2 + 1))
        fails = failing(rows)
        while True:  # nothing changed yet: a policy failure in the batch form leaves the scan to per-node code
            done = len(rows)
            excluded = fails if skipped is None else fails | skipped[:done]
            feasible_at = (~excluded).nonzero()[0]
            if len(feasible_at) > wanted or done == total:
                break
            more = span(done, total)
            rows, fails = np.concatenate((rows, more)), np.concatenate((fails, failing(more)))
        if len(feasible_at) > wanted:  # the feasible node past the sample ends the scan, visited
            chosen = feasible_at[:wanted]
            processed = int(feasible_at[wanted]) + 1
        else:
            chosen, processed = feasible_at, total
        errors = FitErrors()
        lanes = excluded[:processed].nonzero()[0]
        # Every caller reads the fit errors only of a scan that found no node (Volcano's actions
        # record them then), so a scan that found one asks the failing nodes one by one only to
        # fill the error cache or to check the batch answer against the per-node one.
        wanted_errors = not len(chosen) or use_cache or ssn.batch_forms.checked
        if len(lanes) and wanted_errors:  # the fit errors of the failing nodes, in the order they were visited
            failed_rows = rows[lanes]
            names = columns.node_names[failed_rows].tolist()
            asked = failed_rows if skipped is None else failed_rows[~skipped[lanes]]

            def failure_of(row: int):
                return check(task, columns.nodes[row])
            refused: list[str] = []
            if outside is not None:  # refused by the shard: the check is not asked
                refused = columns.node_names[asked[outside[asked]]].tolist()
                asked = asked[~outside[asked]]
            failures = ([failure_of(row) for row in asked.tolist()] if spec is None
                        else columns.row_values(spec, asked, failure_of))  # kept per pod spec and row
            found = dict(zip(columns.node_names[asked].tolist(), failures))
            found.update((name, not_in_shard()) for name in refused)
            for name, failure in found.items():
                if failure is None:
                    raise disagreement(check, f"task {task.key}, node {name}", "fails", "fits")
            reused = cached if cached is not None else {}  # a name not asked again was cached
            errors.nodes = {name: found[name] if name in found else reused[name] for name in names}
            if use_cache:
                self.cache.setdefault(key, {}).update(found)
        # The rotated order of rows in order wraps once at most: as many rows as their span are
        # then a run of the node list.
        feasible = columns.nodes_of(rows[chosen], in_order=columns.in_order(base))
        if self.ssn.batch_forms.checked:
            for node in feasible:
                failure = check(task, node)
                if failure is not None:
                    raise disagreement(check, f"task {task.key}, node {node.name}", "fits", failure)
        ssn.predicate_start_index = (start + processed) % total
        return PredicateResult(feasible, errors)

    @staticmethod
    def _spec_key(task: Task, form: BatchForm) -> tuple | None:
        """The row memo key of a check that is row-local for the task now; None when it is not."""
        if not form.answers_per_row(task, None):
            return None
        spec = memo_key(task)
        return None if spec is None else (form, spec)
