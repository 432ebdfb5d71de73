"""One scheduling session: its state and Volcano's operations on it (the lifecycle that drives
them, open, the configured actions in order, close, is ``framework/lifecycle.py``).

The :class:`Session` is the runtime every compiled policy closes over (``_rt``
in generated code).  It owns the snapshot (jobs, queues, nodes), the hook
dispatchers built from the bundle's tiers (``_H``), the event handlers, and the
decisions made so far.  Scheduling logic lives in the policies; this module
keeps only Volcano's framework: plugin registration, hook dispatch, the
statement's effects, and the PodGroup status update at close.  The standard
library policies call lives in modules of its own, reached through the policy
namespace (``namespace.py``); those that read the session take it first
(``queue_info``, ``job_info``, ``scheduler_helper``, ``arguments``,
``bind_annotations``, ``k8s_filters``), the others need none
(``fallback_orders``, ``dry_run``, ``priority_queue``, ``statement``).
"""

from __future__ import annotations

import time
import uuid
from types import SimpleNamespace
from typing import Any, Callable, Mapping, Protocol

from fumarole.policy_lang.compiled import STATE_VIEW
from fumarole.policy_lang.diagnostics import Diagnostic
from fumarole.runtime.api.constraints import (
    DisruptionBudget,
    NamespaceQuota,
    disruption_budget,
    namespace_quota,
)
from fumarole.runtime.api.model import (
    ALLOCATED,
    BINDING,
    FAILED,
    PENDING,
    PG_COMPLETED,
    PG_INQUEUE,
    PG_PENDING,
    PG_RUNNING,
    PG_UNKNOWN,
    PIPELINED,
    RELEASING,
    RUNNING,
    SUCCEEDED,
    Job,
    Node,
    NodeError,
    Queue,
    Task,
)
from fumarole.runtime.api.resource import Resource
from fumarole.runtime.framework import dispatch as C
from fumarole.runtime.framework.batch_dispatch import BATCH_COMBINATORS, batched_definition
from fumarole.runtime.framework.batch_forms import BatchForms, engines_checked
from fumarole.runtime.framework.budget import StepBudget
from fumarole.runtime.framework.fallback_orders import compare_task, job_fallback, queue_fallback, sub_job_fallback
from fumarole.runtime.framework.policy_error import PolicyRuntimeError
from fumarole.runtime.framework.node_columns import NodeColumns
from fumarole.runtime.framework.row_state import RowState
from fumarole.runtime.framework.numa_pending import apply_pending
from fumarole.runtime.framework.predicate_helper import PredicateHelper
from fumarole.runtime.framework.process_state import PROCESS_STATE_HOOK, ProcessState
from fumarole.runtime.framework.statement import Statement
from fumarole.runtime.framework.topology import Topology
from fumarole.runtime.ingest.gc_pause import collect_if_due, gc_paused
from fumarole.runtime.ingest.kube import Cluster
from fumarole.runtime.ingest.queue_tree import HierarchyProblem
from fumarole.runtime.ingest.scheduler_config import PluginEntry, SchedulerConfig
from fumarole.runtime.ingest.scheduler_options import SchedulerOptions
from fumarole.runtime.k8s.view import K8sView
from fumarole.runtime.k8s.domain_counts import PodCounts


ENGINES = ("fast", "reference")  # how node-level rules run: batch forms over node columns, or node by node


class CompiledBundle(Protocol):
    """What a session runs: a bundle's wiring and compiled policies (``bundles.bundle.Bundle``,
    immutable: a session only reads them)."""

    @property
    def name(self) -> str: ...
    @property
    def revision(self) -> str: ...
    @property
    def config(self) -> SchedulerConfig: ...
    @property
    def scheduler_options(self) -> SchedulerOptions: ...
    @property
    def tiers(self) -> tuple[tuple[PluginEntry, ...], ...]: ...
    @property
    def dispatch(self) -> Mapping[str, Mapping[str, str]]: ...
    @property
    def hook_gates(self) -> Mapping[str, str | list[str] | None]: ...
    @property
    def action_arguments(self) -> Mapping[str, Mapping[str, Any]]: ...
    @property
    def plugins(self) -> Mapping[str, Any]: ...
    @property
    def actions(self) -> Mapping[str, Any]: ...
    @property
    def modules_by_filename(self) -> Mapping[str, Any]: ...


def policies_in_use(bundle: CompiledBundle) -> list[tuple[str, str]]:
    """The ("plugin", name) of each plugin in the bundle's tiers and the ("action", name) of each
    configured action: the policies its sessions run (a used module's definitions are inlined in
    them), in tier and pipeline order."""
    return [("plugin", entry.name) for tier in bundle.tiers for entry in tier] + \
        [("action", name) for name in bundle.config.actions]


def _kept(value: Any) -> Any:
    """A process-state value as the next session reads it.  One computed from a replay's watched
    clock (runtime/whatif/clock_reads.py: rescheduling's last run, tdm's last eviction) is the
    instant it was, not a clock still moving, and the replay learns that the state it leaves
    depends on the session's instant."""
    keep = getattr(value, "kept", None)
    return keep() if keep is not None else value


def _undeclared() -> bool:
    """A plugin's answer to a declaration about its bound when it makes none: its bound may read
    anything (hooks.yaml, ``declares``)."""
    return False


class SessionObserver(Protocol):
    """Told of each placement, eviction and fit error as a session makes it, for explanations
    (``authoring/tracing.py``).  A session has none unless one is attached: a plain run pays
    one ``is None`` test per decision."""

    def placed(self, task: Task, node: Node, status: str) -> None: ...
    def evicting(self, task: Task) -> None: ...
    def undone(self, task: Task) -> None: ...
    def bound(self, task: Task) -> None: ...
    def eviction_recorded(self, task: Task, reason: str) -> None: ...
    def fit_error_made(self, reason: str) -> None: ...
    def nodes_scored(self, scores: dict) -> None: ...


class Decisions:
    """What the outside world sees of a session."""

    def __init__(self) -> None:
        self.binds: list[tuple[str, str]] = []
        self.bind_annotations: dict[str, dict[str, str]] = {}  # pod -> what its bind writes (a device assignment)
        self.numa_assignments: dict[str, dict[str, str]] = {}  # pod -> resource -> its CPUs (numa-aware)
        self.evictions: list[tuple[str, str]] = []
        self.enqueued: list[str] = []
        self.phases: dict[str, str] = {}
        self.pipelined: dict[str, list[tuple[str, str]]] = {}
        # pod -> the node written to its status.nominatedNodeName at close (Session._nominate)
        self.nominations: dict[str, str] = {}
        self.status_counts: dict[str, dict[str, int]] = {}
        self.hyper_nodes: dict[str, str] = {}  # job -> the HyperNode holding it, where it has one
        self.node_hyper_nodes: dict[str, str] = {}  # bound node -> its lowest-tier HyperNode ("" for none)
        self.has_hyper_nodes = False  # the cluster has HyperNodes (besides the session's cluster top)


class Session:
    """The session runtime (Volcano's ``framework.Session``)."""

    def __init__(self, bundle: CompiledBundle, cluster: Cluster, now: float | None = None,
                 options: SchedulerOptions | None = None, process_state: ProcessState | None = None,
                 engine: str = "fast",
                 budget: StepBudget | None = None) -> None:
        """``options`` default to the bundle's; ``process_state`` to a freshly started scheduler's.

        The session reads ``process_state`` here and writes it back in
        :meth:`close`, so passing the same object to consecutive sessions
        makes them one scheduler process's cycles.
        """
        collect_if_due()  # the sessions before this one are usually over: their cycles may go
        with gc_paused():  # building the session's model makes no garbage cycles
            self.options: SchedulerOptions = options if options is not None else bundle.scheduler_options
            self.process_state = process_state if process_state is not None else ProcessState()
            snap = cluster.snapshot(self.options)
            apply_pending(snap.nodes, self.process_state.numa_pending)
            self.bundle = bundle
            self.source = cluster.file  # where the objects came from: the file a problem is placed in
            self.budget = budget if budget is not None else StepBudget()  # every policy of the session runs on it
            self.uid = str(uuid.uuid4())
            self.nodes: dict[str, Node] = snap.nodes
            # Volcano's ssn.NodesInShard: the nodes of the scheduler's NodeShard (ingest/node_shards.py)
            self.nodes_in_shard: frozenset[str] = cluster.nodes_in_shard(self.options)
            self.node_list: list[Node] = list(snap.nodes.values())
            self.queues: dict[str, Queue] = snap.queues
            self.queue_list: list[Queue] = list(snap.queues.values())
            self.jobs: dict[str, Job] = snap.jobs
            self.job_list: list[Job] = list(snap.jobs.values())
            self.total_resource = Resource()
            for node in self.node_list:
                self.total_resource.add(node.allocatable)
            self.topology = Topology(cluster.hyper_nodes, self.node_list)
            self._cluster_constraints = (cluster.disruption_budgets, cluster.resource_quotas)
            self._budgets: list[DisruptionBudget] | None = None
            self._quotas: dict[str, list[NamespaceQuota]] | None = None
            self.topology.adjust_network_topology(self.job_list)
            for job in self.job_list:
                self.topology.recover_allocated(job)
            self.action_names = list(bundle.config.actions)
            self.now = time.time() if now is None else now
            # The clock for annotation stamps (schema: stamp_time): a plain number even where replay
            # passes a watched clock as `now`, since stamping decides nothing.
            self.stamp_time = float(self.now)
            self.decisions = Decisions()
            # Tasks evicted in this session and not given back (Volcano's Releasing ones it chose).
            self.evicting: dict[str, Task] = {}
            self.pod_annotations: dict[str, dict[str, str]] = {}  # task uid -> annotations its bind carries
            self.predicate_start_index = self.process_state.predicate_start_index
            self.predicate_scans = 0  # node scans made (allocate's HyperNode search reads it)
            self.k8s = K8sView(self.node_list, PodCounts(self.node_list) if engine == "fast" else None)
            if engine not in ENGINES:
                raise ValueError(f"unknown engine {engine!r}")
            self.engine = engine
            # Told the phase and the tasks placed so far (fumarole run shows it on a terminal).
            self.progress: Callable[[str, int], None] = lambda phase, placed: None
            self.placed = 0
            self.phase = "open"
            # The fast engine's node columns; None: every rule runs node by node (the reference engine).
            # The fast engine's forms of node rules, by the per-node function (batch_forms.py).
            self.batch_forms = BatchForms(checked=engines_checked())
            self.columns = (NodeColumns(self.node_list, self.k8s, self.batch_forms.checked) if engine == "fast"
                            else None)
            if self.columns is not None:
                for hyper_node in self.topology.list:
                    hyper_node.nodes = self.columns.adopt(hyper_node.nodes)
            self.H = SimpleNamespace()
            self._allocate_handlers: list[Callable] = []
            self._deallocate_handlers: list[Callable] = []
            self._plugins: list[tuple[str, dict]] = []
            self.detached_queues: dict[str, Queue] = {}  # queues jobs name that the session has not (queue_info.queue_of)
            self.problems: list[HierarchyProblem] = []  # configuration problems policies found
            self.warnings: list[Diagnostic] = []  # the problems, placed in the session's file (lifecycle.open_session)
            self._opening_phases = {job.uid: job.phase for job in self.job_list}
            self.observer: SessionObserver | None = None

    # -- lifecycle -----------------------------------------------------------------
    def open(self) -> None:
        bundle = self.bundle
        registered: dict[str, dict[str, Callable]] = {}
        for tier in bundle.tiers:
            for entry in tier:
                hooks = self._guard(lambda: bundle.plugins[entry.name].instantiate(self, self.H, entry.arguments))
                registered[entry.name] = hooks
                self._plugins.append((entry.name, hooks))
                if "allocate" in hooks:
                    self._allocate_handlers.append(hooks["allocate"])
                if "deallocate" in hooks:
                    self._deallocate_handlers.append(hooks["deallocate"])
        self._build_dispatchers(registered)
        for _name, hooks in self._plugins:
            if "open" in hooks:
                self._guard(hooks["open"])

    def _build_dispatchers(self, registered: dict[str, dict[str, Callable]]) -> None:
        bundle = self.bundle
        H = self.H
        fallbacks = {
            "job": job_fallback,
            "queue": queue_fallback,
            "task": compare_task,
            "sub-job": sub_job_fallback,
            "reverse-queue-order": lambda a, b, _p: not H.queue_order(a, b),
        }
        for name, spec in bundle.dispatch.items():
            hook = bundle.hook_gates[spec["hook"]]
            tiers = self._chained_tiers(spec, registered) if "then" in spec else [
                [registered[e.name][spec["hook"]] for e in tier
                 if spec["hook"] in registered.get(e.name, {}) and e.enabled(hook)]
                for tier in bundle.tiers]
            builder, _kinds = C.COMBINATORS[spec["combine"]]
            if spec["combine"] == "order":
                fn = builder(tiers, fallbacks[spec.get("fallback", "job")])
            elif spec["combine"] == "veto":
                fn = builder(*self._split_vetoes(spec, registered))
            elif "bounds" in spec and bundle.dispatch[spec["bounds"]]["combine"] != C.BOUNDED_COMBINE.get(spec["combine"]):
                # one plugin's bound holds only under the combination it was written for
                fn = C.unbounded if spec["combine"] == "sum-bound" else C.all_([])
            elif spec["combine"] in ("tier-bound", "sum-bound"):
                fn = builder(self._bound_tiers(spec, registered))
            elif "declares" in spec:
                fn = builder(self._declaring_tiers(spec, registered))
            else:
                fn = builder(tiers)
            batch_builder = BATCH_COMBINATORS.get(spec["combine"])
            plugin_fns = [f for tier in tiers for f in tier]
            if "then" in spec or any(self.batch_forms.is_per_node_only(f) for f in plugin_fns):
                # a plugin's hook has effects (or is a chain of two, which has no batch form): asked
                # node by node, as the scan asks
                self.batch_forms.mark_per_node_only(fn)
            elif self.columns is not None and batch_builder is not None:
                self.batch_forms.add(fn, batch_builder(plugin_fns, self.batch_forms))
            setattr(H, name, fn)

    def _chained_tiers(self, spec: Mapping[str, Any], registered: dict[str, dict[str, Callable]]) -> C.Tiers:
        """A ``then`` dispatcher's plugins, tier by tier: each plugin taking part in its hook or in the
        ``then`` hook, answering with the first and, when that passes, the second (one plugin's
        answer, so the combinator places it where the plugin stands)."""
        asked = (spec["hook"], spec["then"])
        tiers: C.Tiers = []
        for tier in self.bundle.tiers:
            fns = []
            for e in tier:
                hooks = registered.get(e.name, {})
                own = [hooks[h] for h in asked if h in hooks and e.enabled(self.bundle.hook_gates[h])]
                if own:
                    fns.append(C.chain(*own) if len(own) > 1 else own[0])
            tiers.append(fns)
        return tiers

    def _taking_part(self, spec: Mapping[str, Any], registered: dict[str, dict[str, Callable]]) -> list[list[Any]]:
        """A bound dispatcher's (``bounds``) plugin entries, tier by tier: those taking part in the
        hook it bounds."""
        bounded = self.bundle.dispatch[spec["bounds"]]["hook"]
        bounded_gate = self.bundle.hook_gates[bounded]
        return [[e for e in tier if bounded in registered.get(e.name, {}) and e.enabled(bounded_gate)]
                for tier in self.bundle.tiers]

    def _bound_tiers(self, spec: Mapping[str, Any], registered: dict[str, dict[str, Callable]]
                     ) -> list[list[Callable | None]]:
        """A ``tier-bound`` or ``sum-bound`` dispatcher's plugins: tier by tier, every plugin taking part in the hook
        it bounds, with its own bound, or None when it has none (or its entry turns the bound off)."""
        gate = self.bundle.hook_gates[spec["hook"]]
        return [[registered[e.name].get(spec["hook"]) if e.enabled(gate) else None for e in tier]
                for tier in self._taking_part(spec, registered)]

    def _declaring_tiers(self, spec: Mapping[str, Any], registered: dict[str, dict[str, Callable]]
                         ) -> C.Tiers:
        """A declaration's plugins (a dispatcher's ``declares``: what the plugins of a ``tier-bound``
        one say of their bound): every plugin whose bound that dispatcher asks, with its declaration,
        or an answer of false when it has none (its bound may read anything).  None are asked
        when the bound answers true whatever the plugins (its hook not combined as it assumes)."""
        declared = self.bundle.dispatch[spec["declares"]]
        if self.bundle.dispatch[declared["bounds"]]["combine"] != C.BOUNDED_COMBINE[declared["combine"]]:
            return []
        hook, gate = spec["hook"], self.bundle.hook_gates[spec["hook"]]
        bound, bound_gate = declared["hook"], self.bundle.hook_gates[declared["hook"]]
        return [[registered[e.name][hook] if hook in registered[e.name] and e.enabled(gate) else _undeclared
                 for e in tier if bound in registered[e.name] and e.enabled(bound_gate)]
                for tier in self._taking_part(declared, registered)]

    def _split_vetoes(self, spec: Mapping[str, Any], registered: dict[str, dict[str, Callable]]
                      ) -> tuple[C.Tiers, list[Callable]]:
        """A ``veto`` dispatcher's deciding plugins, tier by tier, and its veto plugins (those the
        spec's ``vetoes`` names), in configuration order whatever their tier."""
        hook, gate = spec["hook"], self.bundle.hook_gates[spec["hook"]]
        vetoing = set(spec.get("vetoes", ()))
        deciders: C.Tiers = []
        vetoes: list[Callable] = []
        for tier in self.bundle.tiers:
            taking_part = [e for e in tier if hook in registered.get(e.name, {}) and e.enabled(gate)]
            deciders.append([registered[e.name][hook] for e in taking_part if e.name not in vetoing])
            vetoes += [registered[e.name][hook] for e in taking_part if e.name in vetoing]
        return deciders, vetoes

    def plugin_hook(self, plugin: str, hook: str) -> Callable | None:
        """One plugin's own implementation of a hook, when its tier entry enables it (what
        Volcano's per-plugin maps, such as HyperNodeOrderMapFn's, hold)."""
        gate = self.bundle.hook_gates.get(hook)
        for tier in self.bundle.tiers:
            for entry in tier:
                if entry.name == plugin and entry.enabled(gate):
                    for name, hooks in self._plugins:
                        if name == plugin and hook in hooks:
                            return hooks[hook]
        return None

    def run_actions(self) -> None:
        """The pipeline of actions, with the cycle collector paused: a session's garbage is freed
        by reference counting (its policies make almost no cycles), while collections set off by
        its many short-lived objects would traverse the whole cluster's model again and again,
        to free nothing (benchmarks/README.md has what that cost)."""
        with gc_paused():
            for name in self.bundle.config.actions:
                self.phase = name
                self.progress(name, self.placed)
                action = self.bundle.actions[name]
                args = self.bundle.action_arguments.get(name, {})
                hooks = self._guard(lambda: action.instantiate(self, self.H, args))
                self._guard(hooks["execute"])

    def close(self) -> Decisions:
        """Job status update (what the decisions report), then the plugins' close hooks."""
        decisions = self.decisions
        for job in self.job_list:
            if self._opening_phases[job.uid] in (PG_PENDING, "") and job.phase == PG_INQUEUE:
                decisions.enqueued.append(job.uid)
            decisions.phases[job.uid] = self.pod_group_phase(job)
            decisions.status_counts[job.uid] = {s: len(b) for s, b in job.status_index.items() if b}
            pipelined = job.status_index.get(PIPELINED)
            if pipelined:
                decisions.pipelined[job.uid] = [(t.key, t.node_name) for t in pipelined.values()]
            self._nominate(job, decisions.nominations)
            if job.allocated_hyper_node is not None:
                decisions.hyper_nodes[job.uid] = job.allocated_hyper_node.name
        decisions.has_hyper_nodes = len(self.topology.list) > 1
        for _pod, node_name in decisions.binds:
            node = self.nodes.get(node_name)
            lowest = self.topology.lowest_of_node(node) if node is not None else None
            decisions.node_hyper_nodes[node_name] = lowest.name if lowest is not None else ""
        for _name, hooks in self._plugins:
            if "close" in hooks:
                self._guard(hooks["close"])
        self._save_process_state()
        return decisions

    @staticmethod
    def _nominate(job: Job, nominations: dict[str, str]) -> None:
        """The nominatedNodeName the job updater writes (RecordJobStatusEvent, cache/cache.go): for
        each allocated, pending or pipelined task not gated, what JobInfo.TaskSchedulingReason
        (api/job_info.go) answers -- the node of its last transaction (its current one when no
        statement holding it was discarded since one was committed), if that pipelined it where
        an eviction made room.  taskUnschedulable only writes a node that is there, never none."""
        index = job.status_index
        for status in (ALLOCATED, PENDING, PIPELINED):
            bucket = index.get(status)
            if not bucket:
                continue
            for task in bucket.values():
                last = task.last_transaction
                if last is None:
                    if status == PIPELINED and task.eviction_occurred and not task.gated:
                        nominations[task.key] = task.node_name
                elif last[0] == PIPELINED and last[2] and not task.gated:
                    nominations[task.key] = last[1]

    def _save_process_state(self) -> None:
        """Write back what the scheduler process keeps for its next session."""
        state = self.process_state
        state.predicate_start_index = self.predicate_start_index
        for name, hooks in self._plugins:
            saved = hooks.get(PROCESS_STATE_HOOK)
            if saved is not None:
                state.plugins[name] = {key: _kept(value) for key, value in saved().items()}

    def plugin_state(self, plugin: str) -> dict[str, Any]:
        """A registered plugin's state as its hooks left it (e.g. proportion's ``deserved``),
        for tools that watch a session from outside; empty when the plugin is not registered."""
        for name, hooks in self._plugins:
            if name == plugin and STATE_VIEW in hooks:
                return hooks[STATE_VIEW]()
        return {}

    def pod_group_phase(self, job: Job) -> str:
        """jobStatus / getPodGroupPhase (framework/session.go)."""
        unschedulable = any(c.get("type") == "Unschedulable" and c.get("status") == "True"
                            and c.get("transitionID") == self.uid for c in job.conditions)
        if job.count(RUNNING) and unschedulable:
            return PG_UNKNOWN
        scheduled = job.scheduled_task_num + job.releasing_scheduled_task_num
        completed = job.count(SUCCEEDED, FAILED)
        if scheduled >= job.min_available:
            return PG_COMPLETED if scheduled == completed else PG_RUNNING
        return PG_PENDING if job.phase != PG_INQUEUE else PG_INQUEUE

    def _guard(self, fn: Callable[[], Any]) -> Any:
        """Run policy code; turn a Python failure into a PolicyRuntimeError naming the policy line."""
        try:
            return fn()
        except PolicyRuntimeError as exc:
            if not exc.file:
                exc.file, exc.line, exc.col = self._policy_location(exc.__traceback__, exc.line, exc.col)
            raise
        except MemoryError as exc:  # the process's memory limit (a backstop of the session's memory budget)
            file, line, col = self._policy_location(exc.__traceback__)
            raise PolicyRuntimeError("the session's memory budget ran out (the process could not allocate); "
                                     "a policy keeps too much", file, line, col) from None
        except RecursionError as exc:  # a function value calling itself, through state
            file, line, col = self._policy_location(exc.__traceback__)
            raise PolicyRuntimeError("the call depth budget ran out: calls nested too deeply (a function value "
                                     "that calls itself?); a policy must terminate", file, line, col) from exc
        except (NodeError, KeyError, TypeError, ValueError, AttributeError, IndexError, ZeroDivisionError,
                OverflowError, RuntimeError) as exc:
            file, line, col = self._policy_location(exc.__traceback__)
            raise PolicyRuntimeError(f"{type(exc).__name__}: {exc}", file, line, col) from exc

    def _policy_location(self, tb, line: int = 0, col: int = 0) -> tuple[str, int, int]:
        found = ("", line, col)
        while tb is not None:
            code = tb.tb_frame.f_code
            module = self.bundle.modules_by_filename.get(code.co_filename)
            if module is not None:
                pline, pcol = module.policy_position(tb.tb_lineno)
                found = (module.policy_file(tb.tb_lineno), pline or line, pcol or col)
            tb = tb.tb_next
        return found

    # -- the fast engine ----------------------------------------------------------------
    def touch(self, node: Node) -> None:
        """The fast engine's row of the node changed (its columns are read again)."""
        if self.columns is not None:
            self.columns.touch(node)

    def row_state(self, initial: dict) -> dict:
        """A plugin's per-node state that row-local rules read (row_state.py): with the fast
        engine's columns, a map that logs the row of the node whose entry changes."""
        if self.columns is None:
            return initial
        return RowState(initial, self.columns.touch_name)

    def batched(self, per_node: Callable, batch: Callable, positions: tuple[int, ...]) -> Callable:
        """A definition over node lists: its batch form under the fast engine (``list[Node]``
        arguments at ``positions`` become batches), the per-node function otherwise."""
        columns = self.columns
        if columns is None:
            return per_node
        return batched_definition(per_node, batch, positions, columns, self.batch_forms.checked)

    # -- event handlers ------------------------------------------------------------
    def fire_allocate(self, task: Task) -> bool:
        """Run every allocate handler, as Volcano runs them all; False when one failed (a handler's
        fit error: Volcano's ``event.Err``)."""
        ok = True
        for handler in self._allocate_handlers:
            if handler(task) is not None:
                ok = False
        return ok

    def fire_deallocate(self, task: Task) -> None:
        for handler in self._deallocate_handlers:
            handler(task)

    # -- statement effects (statement.go / session.go) -----------------------------
    def undo_placement(self, task: Task, on_node: bool = True) -> None:
        """Un-allocate / un-pipeline: back to Pending, off the node, deallocate handlers; the
        task also forgets the HyperNode allocate told the node scorers it was placed for
        (statement.go unallocate / unPipeline clear JobAllocatedHyperNode), so a later dry
        run (gangpreempt, gangreclaim) scores it as a task allocate never touched."""
        job = self.jobs.get(task.job_id)
        if job is not None:
            job.update_task_status(task, PENDING)
        node = self.nodes.get(task.node_name)
        if on_node and node is not None and task.key in node.tasks:
            self.touch(node)
            node.remove_task(task)
        if on_node:
            self.fire_deallocate(task)
            if self.observer is not None:
                self.observer.undone(task)
        task.node_name = ""
        task.job_allocated_hyper_node = None

    def place(self, task: Task, node: Node, status: str) -> bool:
        """Put a task on a node as Allocated or Pipelined: its status, the node's accounting,
        the allocate handlers.  False, with nothing changed, if its job is gone, the node refuses
        it or an allocate handler fails (statement.go rolls the placement back: the task is
        Pending again, off the node, and every deallocate handler runs)."""
        job = self.jobs.get(task.job_id)
        if job is None:
            return False
        job.update_task_status(task, status)
        task.node_name = node.name
        self.touch(node)
        try:
            node.add_task(task)
        except NodeError:
            self.undo_placement(task, on_node=False)
            return False
        handled = self.fire_allocate(task)
        if self.observer is not None:
            self.observer.placed(task, node, status)
        if not handled:
            self.undo_placement(task)
            return False
        self.placed += 1
        self.progress(self.phase, self.placed)
        return True

    def _restatus_on_node(self, task: Task, status: str) -> None:
        """Change a placed task's status and re-account it on its node (evict / unevict)."""
        job = self.jobs.get(task.job_id)
        if job is not None:
            job.update_task_status(task, status)
        node = self.nodes.get(task.node_name)
        if node is not None:
            self.touch(node)
            node.update_task(task)

    def evict_in_session(self, task: Task) -> None:
        """The in-session effect of an eviction: Releasing, re-accounted, deallocate handlers."""
        self._restatus_on_node(task, RELEASING)
        self.evicting[task.uid] = task
        self.fire_deallocate(task)
        if self.observer is not None:
            self.observer.evicting(task)

    def unevict(self, task: Task) -> None:
        """Undo an eviction: the task is Running again (always Running, as in Volcano)."""
        self._restatus_on_node(task, RUNNING)
        self.evicting.pop(task.uid, None)
        self.fire_allocate(task)  # Volcano's unevict does not read the handlers' errors
        if self.observer is not None:
            self.observer.undone(task)

    def bind(self, task: Task) -> None:
        self.decisions.binds.append((task.key, task.node_name))
        carried = self.pod_annotations.get(task.uid)
        if carried:
            self.decisions.bind_annotations[task.key] = dict(carried)
        if self.observer is not None:
            self.observer.bound(task)
        job = self.jobs.get(task.job_id)
        if job is not None:
            job.update_task_status(task, BINDING)

    def record_eviction(self, task: Task, reason: str) -> None:
        self.decisions.evictions.append((task.key, reason))
        if self.observer is not None:
            self.observer.eviction_recorded(task, reason)

    def session_allocate(self, task: Task, node: Node) -> bool:
        """Session.Allocate: allocate now, and bind the job's Allocated tasks once it is ready."""
        if not self.place(task, node, ALLOCATED):
            return False
        job = self.jobs[task.job_id]
        if self.H.job_ready(job):
            for ready in job.tasks_in(ALLOCATED):
                self.bind(ready)
        return True

    def session_evict(self, task: Task, reason: str) -> bool:
        """Session.Evict: evict at once (shuffle)."""
        self.record_eviction(task, reason)
        self.evict_in_session(task)
        return True

    # -- what the session hands policies: its statements and predicate helper (ssn.Statement()),
    # -- the cluster's disruption budgets and quotas as its snapshot holds them (ssn.NamespaceInfo)
    def statement(self) -> Statement:
        return Statement(self)

    def predicate_helper(self) -> PredicateHelper:
        return PredicateHelper(self)

    def disruption_budgets(self) -> list[DisruptionBudget]:
        """Every PodDisruptionBudget of the cluster, read when a policy first asks."""
        if self._budgets is None:
            self._budgets = [disruption_budget(obj) for obj in self._cluster_constraints[0]]
        return self._budgets

    def resource_quota_objects(self) -> tuple:
        """The cluster's ResourceQuota objects, in cluster order: what the extender plugin sends as
        Volcano's NamespaceInfo (``extender_wire.namespace_infos``)."""
        return tuple(self._cluster_constraints[1])

    def namespace_quotas(self, namespace: str) -> list[NamespaceQuota]:
        """The ResourceQuotas of a namespace (Volcano's NamespaceInfo.QuotaStatus), in cluster order."""
        if self._quotas is None:
            self._quotas = {}
            for obj in self._cluster_constraints[1]:
                quota = namespace_quota(obj)
                self._quotas.setdefault(quota.namespace, []).append(quota)
        return self._quotas.get(namespace, [])
