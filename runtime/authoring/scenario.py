"""Scenario files: a cluster, a scheduler configuration, and what one session must decide.

The format is tests/conformance/FORMAT.md (``expect`` and ``expectHooks``
cases), extended for site bundles: ``bundle: DIR`` (relative to the scenario
file) may replace ``scheduler``, ``cluster: FILE`` may replace ``objects``,
``now`` fixes the session clock, ``schedulerOptions`` gives the Volcano
binary's options (over the bundle's) and ``processState`` restates a later
cycle of one scheduler process (docs/scenarios.md).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from fumarole.policy_lang import file_errors
from fumarole.policy_lang.diagnostics import FumaroleError, Span
from fumarole.runtime.authoring import scenario_errors
from fumarole.runtime.authoring.process_state_input import declared_process_states, read_process_inputs
from fumarole.runtime.authoring.scenario_extenders import Canned, read_extenders, serving
from fumarole.runtime.authoring.scenario_keys import unknown_keys
from fumarole.runtime.bundles.bundle import Bundle, build_bundle, load_bundle
from fumarole.runtime.framework.budget import StepBudget
from fumarole.runtime.framework.eviction import Eviction
from fumarole.runtime.framework.lifecycle import close_session, new_session, open_session, run_session
from fumarole.runtime.framework.namespace import PolicyRuntimeError
from fumarole.runtime.framework.process_state import ProcessState
from fumarole.runtime.framework.scheduler_helper import filter_out_unresolvable_nodes
from fumarole.runtime.framework.session import Decisions, Session
from fumarole.runtime.ingest.kube import Cluster, cluster_from_objects, load_cluster
from fumarole.runtime.ingest.kube_convert import empty_task, job_from_pod_group, parse_time, task_from_pod
from fumarole.runtime.ingest.scheduler_config import config_from_document
from fumarole.runtime.ingest.scheduler_options import SchedulerOptions
from fumarole.runtime.ingest.source import decode_file
from fumarole.runtime.ingest.yamlpos import load_file, position



@dataclass
class Scenario:
    name: str
    file: str
    doc: dict
    bundle: Bundle
    cluster: Cluster
    now: float | None = None
    options: SchedulerOptions | None = None  # None: the bundle's
    process_state: ProcessState = field(default_factory=ProcessState)
    cluster_text: str | None = None  # a `cluster:` file's text, which places a problem found at open
    extenders: dict[str, dict[str, Canned]] = field(default_factory=dict)  # stand-in HTTP extenders

    @property
    def sources(self) -> dict[str, str]:
        return {self.cluster.file: self.cluster_text} if self.cluster_text is not None else {}

    def session(self, engine: str = "fast", timeout: float | None = None) -> Session:
        """The scenario's session: a copy of its process state, so running it twice decides the same;
        its policies may run ``timeout`` seconds (R001 past it)."""
        return new_session(self.bundle, self.cluster, now=self.now, options=self.options,
                           process_state=self.process_state.copy(), engine=engine, budget=StepBudget(timeout=timeout))


@dataclass
class Outcome:
    """One case's result: passed, or the first difference (or why it could not run)."""

    name: str
    file: str
    passed: bool
    difference: str = ""
    line: int = 1
    decisions: Decisions | None = field(default=None, repr=False)
    bad_input: bool = False  # the file is not a scenario that can run (exit 2, not 1)


def load_scenario(path: Path) -> Scenario:
    file = str(path)
    doc, text = load_file(path, "S001")
    if not isinstance(doc, dict):
        raise FumaroleError([scenario_errors.not_a_mapping(file)], {file: text})
    unknown = unknown_keys(doc, file)
    if unknown:
        raise FumaroleError(unknown, {file: text})
    if "expect" not in doc and "expectHooks" not in doc:
        raise FumaroleError([scenario_errors.nothing_expected(file, Span(*position(doc)))], {file: text})
    try:
        if "bundle" in doc:
            bundle = load_bundle(path.parent / str(doc["bundle"]))
        elif "scheduler" in doc:
            config = config_from_document(doc["scheduler"], file)
            bundle = build_bundle(config, loaded=False)
        else:
            raise FumaroleError([scenario_errors.no_scheduler(file, Span(*position(doc)))])
        if "cluster" in doc:
            cluster_path = path.parent / str(doc["cluster"])
            try:
                raw = cluster_path.read_bytes()
            except OSError as exc:
                raise FumaroleError([file_errors.unreadable(cluster_path, exc.strerror, file,
                                                            Span(*position(doc, "cluster")))]) from None
            cluster_text = decode_file(raw, cluster_path)
            cluster = load_cluster(cluster_text, str(cluster_path))
        else:
            cluster_text, cluster = None, cluster_from_objects(list(doc.get("objects") or []), file, text)
    except FumaroleError as err:
        err.sources.setdefault(file, text)
        raise
    now = parse_time(doc["now"]) if doc.get("now") is not None else None
    options, state = _process_inputs(doc, bundle, file, text)
    extenders, diags = read_extenders(doc, file)
    if diags:
        raise FumaroleError(diags, {file: text})
    return Scenario(str(doc.get("name") or path.stem), file, doc, bundle, cluster, now, options, state, cluster_text,
                    extenders)


def _process_inputs(doc: dict, bundle: Bundle, file: str,
                    text: str) -> tuple[SchedulerOptions | None, ProcessState]:
    """The scenario's ``schedulerOptions`` (over the bundle's) and ``processState``; FumaroleError when bad."""
    options, state, diags = read_process_inputs(doc, bundle.scheduler_options,
                                                declared_process_states(bundle.plugins), file)
    if diags:
        raise FumaroleError(diags, {file: text})
    return options, state


# -- expect ---------------------------------------------------------------------------

def decisions_as_expect(decisions: Decisions) -> dict[str, Any]:
    """The session's decisions in the shape of a scenario's `expect` block."""
    per_hyper_node = Counter(decisions.node_hyper_nodes.get(node, "") for _pod, node in decisions.binds)
    return {
        "binds": {pod: node for pod, node in decisions.binds},
        **({"bindCountsPerHyperNode": sorted(per_hyper_node.values())} if decisions.has_hyper_nodes else {}),
        "evicted": [pod for pod, _reason in decisions.evictions],
        "pipelined": {job: sorted({node for _pod, node in tasks}) for job, tasks in decisions.pipelined.items()},
        "podGroupPhase": dict(decisions.phases),
        "taskStatusCount": {job: counts for job, counts in decisions.status_counts.items() if counts},
        **({"bindAnnotations": {pod: dict(values) for pod, values in decisions.bind_annotations.items()}}
           if decisions.bind_annotations else {}),
        **({"numaAssignments": {pod: dict(sets) for pod, sets in decisions.numa_assignments.items()}}
           if decisions.numa_assignments else {}),
    }


def compare_expect(expect: dict, decisions: Decisions) -> str | None:
    """The first difference between `expect` and the decisions, or None."""
    got_binds = {pod: node for pod, node in decisions.binds}
    if "bindCount" in expect:
        if len(decisions.binds) != int(expect["bindCount"]):
            return f"bindCount: expected {expect['bindCount']}, got {len(decisions.binds)} ({_fmt(got_binds)})"
    else:
        want_binds = dict(expect.get("binds") or {})
        if want_binds != got_binds:
            return f"binds: expected {_fmt(want_binds)}, got {_fmt(got_binds)}"
    if "bindCountsPerHyperNode" in expect:
        per_hyper_node = Counter(decisions.node_hyper_nodes.get(node, "") for _pod, node in decisions.binds)
        got_counts = sorted(per_hyper_node.values())
        want_counts = [int(n) for n in expect["bindCountsPerHyperNode"] or []]
        if got_counts != want_counts:
            return (f"bindCountsPerHyperNode: expected {want_counts}, got {got_counts} "
                    f"({_fmt(dict(per_hyper_node))})")
    for pod, values in (expect.get("bindAnnotations") or {}).items():
        got = decisions.bind_annotations.get(pod, {})
        want = {str(k): str(v) for k, v in (values or {}).items()}
        if want != got:
            return f"bindAnnotations[{pod}]: expected {_fmt(want)}, got {_fmt(got)}"
    if "numaAssignments" in expect:
        want_numa = {str(pod): {str(k): str(v) for k, v in (sets or {}).items()}
                     for pod, sets in (expect.get("numaAssignments") or {}).items()}
        if want_numa != decisions.numa_assignments:
            return f"numaAssignments: expected {_fmt(want_numa)}, got {_fmt(decisions.numa_assignments)}"
    want_evicted = Counter(expect.get("evicted") or [])
    got_evicted = Counter(pod for pod, _ in decisions.evictions)
    if want_evicted != got_evicted:
        return f"evicted: expected {sorted(want_evicted.elements())}, got {sorted(got_evicted.elements())}"
    for job, nodes in (expect.get("pipelined") or {}).items():
        tasks = decisions.pipelined.get(job, [])
        if not tasks:
            return f"pipelined[{job}]: expected a pipelined task on {list(nodes)}, got none"
        for pod, node in tasks:
            if node not in nodes:
                return f"pipelined[{job}]: {pod} is pipelined on {node}, expected one of {list(nodes)}"
    for job, phase in (expect.get("podGroupPhase") or {}).items():
        got_phase = decisions.phases.get(job)
        if got_phase != phase:
            return f"podGroupPhase[{job}]: expected {phase}, got {got_phase}"
    for job, counts in (expect.get("taskStatusCount") or {}).items():
        got_statuses = decisions.status_counts.get(job, {})
        for status, count in counts.items():
            if got_statuses.get(status, 0) != count:
                return f"taskStatusCount[{job}][{status}]: expected {count}, got {got_statuses.get(status, 0)}"
    return None


def _fmt(mapping: dict) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in sorted(mapping.items())) + "}"


# -- expectHooks --------------------------------------------------------------------------

class _HookCalls:
    """Runs the `expectHooks` calls of one case against an open session."""

    def __init__(self, ssn: Session, scenario: Scenario) -> None:
        self.ssn = ssn
        self.priorities = scenario.cluster.priorities()

    def task(self, ref: Any):
        if ref is None:
            return empty_task()
        if isinstance(ref, dict):
            return task_from_pod(ref)
        for job in self.ssn.job_list:
            for task in job.tasks.values():
                if task.key == ref:
                    return task
        for node in self.ssn.node_list:
            if ref in node.tasks:
                return node.tasks[ref]
        raise LookupError(f"no task {ref!r} in the session")

    def job(self, ref: Any):
        if isinstance(ref, dict):
            values, default = self.priorities
            return job_from_pod_group(ref, values, default)
        job = self.ssn.jobs.get(ref)
        if job is None:
            raise LookupError(f"no job {ref!r} in the session")
        return job

    def node(self, name: str):
        node = self.ssn.nodes.get(name)
        if node is None:
            raise LookupError(f"no node {name!r} in the session")
        return node

    def call(self, entry: dict) -> str | None:
        H, hook = self.ssn.H, entry.get("hook")
        handler = getattr(self, "_" + str(hook), None)
        if handler is None:
            return f"hook call '{hook}' is not supported by fumarole"
        return handler(H, entry)

    def _nodeOrder(self, H, e):
        task = self.task(e["task"])
        tolerance = float(e.get("tolerance", 0))
        for name, want in (e.get("scores") or {}).items():
            got = H.node_order(task, self.node(name))
            if abs(got - float(want)) > tolerance:
                return f"nodeOrder({e['task']}, {name}): expected {want}, got {got}"
        return None

    def _scores(self, what: str, got: dict | None, e: dict) -> str | None:
        """Compare a score map (keys are named objects) with `scores`, within `tolerance`."""
        named = {key.name: value for key, value in (got or {}).items()}
        tolerance = float(e.get("tolerance", 0))
        want = {str(k): float(v) for k, v in (e.get("scores") or {}).items()}
        for name, value in want.items():
            if abs(named.get(name, 0.0) - value) > tolerance:
                return f"{what}: {name} expected {value}, got {named.get(name, 0.0)} (all: {_fmt(named)})"
        if e.get("exact") and set(named) != set(want):
            return f"{what}: expected scores for exactly {sorted(want)}, got {sorted(named)}"
        return None

    def _batchNodeOrder(self, H, e):
        task = self.task(e["task"])
        allocated = str(e.get("jobAllocatedHyperNode") or "")
        task.job_allocated_hyper_node = self.ssn.topology.get(allocated)
        if allocated and task.job_allocated_hyper_node is None:
            raise LookupError(f"no HyperNode {allocated!r} in the session")
        nodes = [self.node(name) for name in e.get("nodes") or []]
        return self._scores(f"batchNodeOrder({e['task']})", H.batch_node_order(task, nodes), e)

    def _hyperNodeOrder(self, H, e):
        sub_job = next((s for job in self.ssn.job_list for s in job.sub_jobs.values() if s.uid == e["subJob"]), None)
        if sub_job is None:
            raise LookupError(f"no sub-job {e['subJob']!r} in the session")
        hook = self.ssn.plugin_hook(str(e.get("plugin")), "hyper_node_order")
        got = hook(sub_job, list(self.ssn.topology.list)) if hook is not None else {}
        return self._scores(f"hyperNodeOrder({e['subJob']}, {e.get('plugin')})", got, e)

    def _predicate(self, H, e):
        task = self.task(e["task"])
        got = {n.name for n in self.ssn.node_list if H.predicate(task, n) is None}
        want = set(e.get("feasible") or [])
        return None if got == want else f"predicate({_ref(e['task'])}): expected feasible {sorted(want)}, got {sorted(got)}"

    def _jobEnqueued(self, H, e):
        H.job_enqueued(self.job(e["job"]))
        return None

    def _jobEnqueueable(self, H, e):
        got = H.job_enqueueable(self.job(e["job"]))
        return None if got == bool(e["result"]) else f"jobEnqueueable({_ref(e['job'])}): expected {e['result']}, got {got}"

    def _jobOrder(self, H, e):
        got = H.job_order(self.job(e["left"]), self.job(e["right"]))
        return None if got == bool(e["result"]) else \
            f"jobOrder({_ref(e['left'])}, {_ref(e['right'])}): expected {e['result']}, got {got}"

    def _jobOrderCompare(self, H, e):
        got = H.job_order_compare(self.job(e["left"]), self.job(e["right"]))
        return None if got == int(e["result"]) else \
            f"jobOrderCompare({_ref(e['left'])}, {_ref(e['right'])}): expected {e['result']}, got {got}"

    def _taskOrder(self, H, e):
        got = H.task_order(self.task(e["left"]), self.task(e["right"]))
        return None if got == bool(e["result"]) else \
            f"taskOrder({_ref(e['left'])}, {_ref(e['right'])}): expected {e['result']}, got {got}"

    def _preemptable(self, H, e):
        preemptor = self.task(e.get("preemptor"))
        candidates = [self.task(c) for c in e.get("candidates") or []]
        got = [t.key for t in H.preemptable(preemptor, candidates)]
        want = list(e.get("result") or [])
        return None if got == want else f"preemptable: expected {want}, got {got}"

    def _unifiedEvictable(self, H, e):
        """UnifiedEvictable with a context whose job is outside the session: only its priority is set."""
        job = job_from_pod_group({"metadata": {"name": "", "namespace": ""}}, {}, None)
        job.priority = int(e["jobPriority"])
        candidates = [self.task(c) for c in e.get("candidates") or []]
        got = sorted(t.key for t in H.unified_evictable(Eviction(str(e["kind"]), job, ""), candidates))
        if "count" in e and len(got) != int(e["count"]):
            return f"unifiedEvictable: expected {e['count']} tasks, got {len(got)} ({got})"
        want = sorted(e.get("result") or [])
        return None if "result" not in e or got == want else f"unifiedEvictable: expected {want}, got {got}"

    def _reclaimable(self, H, e):
        reclaimer = self.task(e.get("reclaimer"))
        candidates = [self.task(c) for c in e.get("candidates") or []]
        got = [t.key for t in H.reclaimable(reclaimer, candidates)]
        want = list(e.get("result") or [])
        return None if got == want else f"reclaimable: expected {want}, got {got}"

    def _victimTasks(self, H, e):
        """VictimTasks(tasks): a set upstream, so `result` is compared as a set."""
        got = {id(t): t.key for t in H.victim_tasks([self.task(t) for t in e.get("tasks") or []])}
        if "count" in e and len(got) != int(e["count"]):
            return f"victimTasks: expected {e['count']} tasks, got {len(got)}"
        want = sorted(e.get("result") or [])
        return None if "result" not in e or sorted(got.values()) == want else \
            f"victimTasks: expected {want}, got {sorted(got.values())}"

    def _victimsQueue(self, H, e):
        framework = self.ssn.bundle.library.modules["framework"].instantiate(self.ssn, H, {})
        preemptor = self.task(e.get("preemptor"))
        victims = [self.task(v) for v in e.get("victims") or []]
        first = framework["victims_queue"](victims, preemptor).pop()
        return None if first.key == e["first"] else f"victimsQueue: expected {e['first']} first, got {first.key}"

    def _potentialNodes(self, H, e):
        from fumarole.runtime.api.fit import UNRESOLVABLE, FitError, FitErrors

        task = self.task(e["task"])
        job = self.ssn.jobs.get(task.job_id)
        if e.get("unresolvableNodes") and job is not None:
            errors = FitErrors({n: FitError([(UNRESOLVABLE, "injected by the test")]) for n in e["unresolvableNodes"]})
            job.fit_errors[task.uid] = errors
        got = [n.name for n in filter_out_unresolvable_nodes(self.ssn, task)]
        want = list(e.get("result") or [])
        return None if got == want else f"potentialNodes({e['task']}): expected {want}, got {got}"


def _ref(ref: Any) -> str:
    if isinstance(ref, dict):
        meta = ref.get("metadata") or {}
        return f"<inline {meta.get('namespace', '')}/{meta.get('name', '')}>"
    return str(ref)


# -- running -------------------------------------------------------------------------------

def run_scenario(scenario: Scenario, engine: str = "fast", timeout: float | None = None) -> Outcome:
    """The scenario's session against its expectations, its stand-in extenders serving meanwhile."""
    with serving(scenario.extenders):
        return _run(scenario, engine, timeout)


def _run(scenario: Scenario, engine: str, timeout: float | None) -> Outcome:
    """The hook calls of `expectHooks` on one session, then the decisions of `expect` on a fresh
    one: a case with both checks both (before, `expect` beside `expectHooks` was never read)."""
    doc = scenario.doc
    if "expectHooks" in doc:
        ssn = scenario.session(engine, timeout)
        open_session(ssn, ssn.source, scenario.sources)
        calls = _HookCalls(ssn, scenario)
        for i, entry in enumerate(doc["expectHooks"] or []):
            try:
                difference = calls.call(entry)
            except LookupError as exc:
                difference = str(exc.args[0])
            if difference:
                line, _ = position(doc["expectHooks"], i)
                return Outcome(scenario.name, scenario.file, False, difference, line)
        close_session(ssn)
        if "expect" not in doc:
            return Outcome(scenario.name, scenario.file, True)
    ssn = scenario.session(engine, timeout)
    decisions = run_session(ssn, sources=scenario.sources)
    difference = compare_expect(doc.get("expect") or {}, decisions)
    line = position(doc, "expect")[0]
    return Outcome(scenario.name, scenario.file, difference is None, difference or "", line, decisions)


def run_file(path: Path, prepare: Callable[[Scenario], Scenario] | None = None, engine: str = "fast",
             timeout: float | None = None) -> Outcome:
    """Load and run one scenario file; a case that cannot run is a failure, never a skip.

    A file that is not a valid scenario (empty, unparsable, naming a missing bundle)
    is marked ``bad_input``: the run reports it like a failure and exits 2.

    ``prepare`` may change the loaded scenario before it runs (``fumarole test
    --coverage`` swaps in an instrumented copy of the bundle's policies).  ``engine``
    is the session's (``fast`` or ``reference``: both must decide the same); ``timeout``
    the seconds its policies may run (``fumarole test --session-timeout``): a case past
    it fails with R001's message at the policy line it had reached.
    """
    try:
        scenario = load_scenario(path)
    except FumaroleError as err:
        first = err.diagnostics[0]
        return Outcome(path.stem, str(path), False, f"cannot run: {first.headline()}", first.span.line,
                       bad_input=True)
    try:
        return run_scenario(prepare(scenario) if prepare else scenario, engine, timeout)
    except FumaroleError as err:  # the cluster is one Volcano would refuse
        first = err.diagnostics[0]
        line = first.span.line if first.file == scenario.file else position(scenario.doc, "cluster")[0]
        return Outcome(scenario.name, scenario.file, False, f"cannot run: {first.headline()}", line,
                       bad_input=True)
    except PolicyRuntimeError as exc:
        where = f"{exc.file}:{exc.line}:{exc.col}: " if exc.file else ""
        return Outcome(scenario.name, scenario.file, False, f"cannot run: {where}{exc.message}")
    except Exception as exc:  # noqa: BLE001 - one broken case must not stop the others
        return Outcome(scenario.name, scenario.file, False, f"cannot run: internal error: {type(exc).__name__}: {exc}")


def scenario_files(paths: list[Path]) -> list[Path]:
    """The scenarios to run: files as given, and in folders (recursively) every YAML file
    except those that are plainly something else (cluster dumps, bundle manifests,
    scheduler configurations, traces), so a scenario that is merely broken still counts as failed."""
    from fumarole.runtime.authoring.check import classify

    out: list[Path] = []
    for path in paths:
        if not path.is_dir():
            out.append(path)
            continue
        for file in sorted(p for p in path.rglob("*.yaml") if p.is_file()):
            try:
                kind = classify(file, file.read_text())
            except (OSError, UnicodeDecodeError):
                kind = None
            if kind not in ("cluster", "bundle", "conf", "hooks", "whatif"):
                out.append(file)
    return out
