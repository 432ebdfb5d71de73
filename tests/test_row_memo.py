"""Row memos: which calls the compiler memoises over every node row, and that a memo follows
every change to a row (policy_lang/vectorize.py, NodeColumns.memo)."""

from __future__ import annotations

import numpy as np

from fumarole.policy_lang.driver import compile_checked
from fumarole.runtime.api.model import Node
from fumarole.runtime.api.resource import Resource
from fumarole.runtime.framework.node_columns import NodeColumns
from fumarole.runtime.k8s.view import K8sView

from tests.helpers import checked

_PLUGIN = """plugin p

arg weight: int = 2
state seen: int

on batch_node_order(task, candidates):
    return {n: {rule}(task, n) for n in candidates}

def free_cpu(task: Task, node: Node) -> float = (node.idle.cpu - task.request.cpu) * weight

def with_state(task: Task, node: Node) -> float = node.idle.cpu + seen

def by_name(task: Task, node: Node) -> float = 1.0 if node.name == "a" else 0.0

def by_job(task: Task, node: Node) -> float = node.idle.cpu if task.job_id == "x" else 0.0

def nested(task: Task, node: Node) -> float = free_cpu(task, node) + 1
"""


def _source(rule: str) -> str:
    """The batch form of the hook calling ``rule``."""
    source = compile_checked(checked(_PLUGIN.replace("{rule}", rule))).source
    start = source.index("def _bh_batch_node_order")
    return source[start:source.index("return None", start)]


def test_a_row_local_definition_is_memoised():
    assert "_V.row_memo(" in _source("free_cpu")
    assert "_V.row_memo(" in _source("nested")  # calls only row-local code
    assert "_V.row_memo(" in _source("by_name")  # a node's name is its row's for the session


def test_state_and_other_task_facts_are_not_memoised():
    for rule in ("with_state", "by_job"):
        assert "_V.row_memo(" not in _source(rule), rule


def _columns(*cpus: float) -> NodeColumns:
    nodes = [Node(f"n{i}", Resource(cpu, 1e9), Resource(cpu, 1e9), {}, {}, {}, [], False, [])
             for i, cpu in enumerate(cpus)]
    return NodeColumns(nodes, K8sView(nodes))


def _idle_cpu(batches: list[list[int]]):
    """A batch form of the nodes' idle CPU that records the rows of each batch it is asked for."""
    def compute(batch):
        batches.append(batch.rows.tolist())
        return batch.attribute("idle").cpu
    return compute


def test_a_memo_recomputes_only_the_rows_touched_since_and_sees_every_touch():
    columns = _columns(1000.0, 2000.0, 3000.0)
    batches: list[list[int]] = []
    compute = _idle_cpu(batches)

    def idle_of(node):
        return node.idle.milli_cpu

    assert columns.memo("k", compute, idle_of).tolist() == [1000.0, 2000.0, 3000.0]
    node = columns.nodes[1]
    node.idle.milli_cpu = 500.0
    columns.touch(node)
    assert columns.memo("k", compute, idle_of).tolist() == [1000.0, 500.0, 3000.0]
    node.idle.milli_cpu = 400.0  # touched twice in a row, read in between: both changes count
    columns.touch(node)
    assert columns.all_batch().attribute("idle").cpu.tolist() == [1000.0, 400.0, 3000.0]
    node.idle.milli_cpu = 300.0
    columns.touch(node)
    assert columns.memo("k", compute, idle_of).tolist() == [1000.0, 300.0, 3000.0]
    assert batches == [[0, 1, 2]]  # a few touched rows are recomputed node by node


def test_a_row_that_raises_node_by_node_is_recomputed_as_a_batch():
    columns = _columns(1000.0, 2000.0)

    def fails(node):
        raise ZeroDivisionError

    def compute(batch):
        return np.full(len(batch), 7.0)

    columns.memo("k", compute, fails)
    columns.touch(columns.nodes[0])
    assert columns.memo("k", compute, fails).tolist() == [7.0, 7.0]


def test_a_memo_asked_while_another_works_out_rows_computes_them_directly():
    columns = _columns(1000.0, 2000.0, 3000.0)
    inner_batches: list[list[int]] = []
    inner = _idle_cpu(inner_batches)

    def outer(batch):  # a memoised rule calling a memoised rule
        return columns.memo_over(batch, "inner", inner, lambda node: node.idle.milli_cpu) * 2

    def outer_row(node):
        return node.idle.milli_cpu * 2

    assert columns.memo("outer", outer, outer_row).tolist() == [2000.0, 4000.0, 6000.0]
    assert "inner" not in columns._memos  # the outer memo keeps the rows; no second memo of them
    for node in columns.nodes:
        node.idle.milli_cpu += 1
        columns.touch(node)
    columns.MEMO_ROWS_NODE_BY_NODE = 0  # the touched rows as a batch
    assert columns.memo("outer", outer, outer_row).tolist() == [2002.0, 4002.0, 6002.0]
    assert inner_batches == [[0, 1, 2], [0, 1, 2]]
    # Asked on its own, the memo over a batch keeps its values and follows the rows' changes.
    batch = columns.all_batch()
    assert columns.memo_over(batch, "inner", inner, None).tolist() == [1001.0, 2001.0, 3001.0]
    assert "inner" in columns._memos and columns.working_out == 0


def test_the_compiler_knows_exactly_the_node_attributes_kept_as_columns():
    from fumarole.policy_lang.vectorize import ROW_NODE_ATTRIBUTES
    from fumarole.runtime.framework.node_columns import BOOL_ATTRIBUTES, NUMERIC_ATTRIBUTES, RESOURCE_ATTRIBUTES

    assert ROW_NODE_ATTRIBUTES == {*RESOURCE_ATTRIBUTES, *NUMERIC_ATTRIBUTES, *BOOL_ATTRIBUTES}


def test_a_static_column_is_read_once_and_the_others_follow_every_touch():
    from fumarole.runtime.framework.node_columns import STATIC_ATTRIBUTES

    assert STATIC_ATTRIBUTES == {"allocatable", "capacity", "max_task_num", "unschedulable"}
    columns = _columns(1000.0, 2000.0)
    assert columns.current("allocatable") and columns.current("idle")
    node = columns.nodes[1]
    node.idle = Resource(500.0, 1e9)
    columns.touch(node)
    assert columns.current("allocatable") and columns.current("idle")
    assert columns.resources["idle"].cpu.tolist() == [1000.0, 500.0]
    assert columns.resources["allocatable"].cpu.tolist() == [1000.0, 2000.0]


_PREDICATE = """plugin p

state flag: bool

on predicate(task, node):
{body}

def flagged(task: Task) -> bool = flag
"""


def _guard(body: str) -> str | None:
    """The guard the hook's batch form is registered with, as source; None without one."""
    source = compile_checked(checked(_PREDICATE.replace("{body}", body))).source
    registered = next(line.strip() for line in source.splitlines()
                      if line.strip().startswith("_rt.batch_forms.add(_hook_predicate, "))
    start = registered.find("guard=")
    return None if start < 0 else registered[start:-len("))")]


def test_a_row_local_failure_hook_is_memoised_always_or_while_its_guards_are_false():
    assert _guard('    fail "full" when node.pod_count >= node.max_task_num').endswith(": False")
    guarded = _guard('    fail "full" when node.pod_count >= 3\n    if flagged(task):\n        fail "flag"')
    assert guarded is not None and "f_flagged(" in guarded


def test_hooks_reading_more_than_their_row_or_guarding_on_the_node_are_not_memoised():
    assert _guard('    fail "a" when node.name == "a"').endswith(": False")  # the row's own name
    assert _guard('    fail "a" when len(nodes) > 3') is None  # every node
    assert _guard('    fail "s" when flag') is None  # state outside a guard
    assert _guard('    if node.pod_count > 1 and flagged(task):\n        fail "n"') is None  # guard reads the node


_CHECKS = """action a

def ok(task: Task, node: Node) -> FitError?:
    let missing = insufficient(task.init_request, node.future_idle)
    if len(missing) > 0:
        return fit_error("Insufficient " + missing[0])
    return predicate(task, node)

def named(task: Task, node: Node) -> FitError?:
    return fit_error("a") if node.name == "a" else predicate(task, node)

def counted(task: Task, node: Node) -> FitError?:
    return fit_error("a") if len(jobs) > 3 else predicate(task, node)

def unresolvable(task: Task, node: Node) -> FitError?:
    let failure = predicate(task, node)
    if failure != none and failure.unresolvable:
        return failure
    return none

on execute:
    pass
"""


def test_a_node_check_asking_failure_hooks_is_memoised_while_the_hooks_are_row_local():
    source = compile_checked(checked(_CHECKS)).source
    tests = [line.strip() for line in source.splitlines() if "row_local=" in line]
    assert tests == ["_rt.batch_forms.add(f_ok, _BatchForm(_bf_ok_SN, row_local=lambda v_task, v_node: "
                     "_rt.batch_forms.hooks_row_local((_H.predicate,), v_task)))",
                     # reading the failure's own attributes keeps it row-local (preempt_predicate)
                     "_rt.batch_forms.add(f_unresolvable, _BatchForm(_bf_unresolvable_SN, row_local=lambda v_task_3, "
                     "v_node_3: _rt.batch_forms.hooks_row_local((_H.predicate,), v_task_3)))"]


def test_the_preempt_predicate_and_binpack_score_are_memoised():
    """preempt and reclaim scan the nodes with preempt_predicate and score them with binpack for
    every preemptor they try: both are kept per pod spec, row by row."""
    from pathlib import Path

    policies = Path(__file__).resolve().parent.parent / "policies/volcano"

    def compiled(path: str) -> str:
        return compile_checked(checked((policies / path).read_text(), path)).source
    assert any(line.strip().startswith("_rt.batch_forms.add(f_preempt_predicate, ") and "row_local=" in line
               for line in compiled("actions/preempt.policy").splitlines())
    source = compiled("plugins/binpack.policy")
    start = source.index("def _bh_node_order")
    assert "_V.row_memo(" in source[start:source.index("_rt.batch_forms.add(", start)]


def test_a_hook_is_row_local_for_a_task_only_while_every_plugin_guard_is_false():
    from fumarole.runtime.framework.batch_dispatch import first_failure
    from fumarole.runtime.framework.batch_forms import BatchForm, BatchForms

    forms = BatchForms()

    def plugin(guard):
        fn = lambda task, node: None  # noqa: E731
        forms.add(fn, BatchForm(lambda task, node: None, guard=guard))
        return fn
    quiet, busy = plugin(lambda task, node: task == "busy"), plugin(lambda task, node: False)
    hook = lambda task, node: None  # noqa: E731
    forms.add(hook, first_failure([quiet, busy], forms))
    assert forms.hooks_row_local((hook,), "calm") and not forms.hooks_row_local((hook,), "busy")
    unguarded = lambda task, node: None  # noqa: E731
    forms.add(unguarded, first_failure([quiet, plugin(None)], forms))
    assert not forms.hooks_row_local((unguarded,), "calm")
    assert not forms.hooks_row_local((lambda task, node: None,), "calm")  # no batch form: per node


def test_row_values_are_kept_until_their_row_is_touched():
    columns = _columns(1000.0, 2000.0)
    calls: list[int] = []

    def compute(row):
        calls.append(row)
        return columns.nodes[row].idle.milli_cpu

    assert columns.row_values("k", np.array([0, 1]), compute) == [1000.0, 2000.0]
    assert columns.row_values("k", np.array([1, 0, 1]), compute) == [2000.0, 1000.0, 2000.0]
    columns.nodes[1].idle.milli_cpu = 5.0
    columns.touch(columns.nodes[1])
    assert columns.row_values("k", np.array([1]), compute) == [5.0]
    assert columns.row_values("k", np.array([0, 1]), compute) == [1000.0, 5.0]
    assert columns.row_values("other", np.array([0]), compute) == [1000.0]  # per key
    assert calls == [0, 1, 1, 0]


def test_a_node_list_that_changes_forgets_its_rows():
    from fumarole.runtime.framework.node_columns import NodeList, as_batch

    columns = _columns(1000.0, 2000.0, 3000.0)
    nodes = NodeList(columns.nodes[:2])
    nodes.rows = np.array([0, 1])
    assert as_batch(columns, nodes).rows.tolist() == [0, 1]
    nodes.append(columns.nodes[2])  # a policy's append
    assert nodes.rows is None and as_batch(columns, nodes).rows.tolist() == [0, 1, 2]


def test_nodes_of_rows_in_order_are_a_slice_of_the_node_list_and_any_rows_are_gathered():
    columns = _columns(*[1000.0 * (i + 1) for i in range(6)])
    run = columns.adopt(columns.nodes[1:5]).rows
    assert columns.in_order(run) and columns.in_order(columns.all_rows)
    assert not columns.in_order(columns.adopt([columns.nodes[2], columns.nodes[0]]).rows)
    for rows in ([1, 2, 3, 4], [3, 4, 1, 2], [4, 1], [2], []):  # a run, rotated runs, one row, none
        picked = run[[r - 1 for r in rows]] if rows else run[:0]
        listed = columns.nodes_of(picked, in_order=True)
        assert list(listed) == [columns.nodes[r] for r in rows] and listed.rows.tolist() == rows


_ROW_STATE = """plugin p

state closed: map[string, bool]
state cards: map[string, list[int]]
state swapped: map[string, bool]

on open:
    swapped = {}

on predicate(task, node):
{body}
"""


def _row_state_guard(body: str) -> tuple[str | None, bool]:
    """The predicate's guard, and whether ``closed`` becomes a row state in the builder."""
    source = compile_checked(checked(_ROW_STATE.replace("{body}", body))).source
    registered = next(line.strip() for line in source.splitlines()
                      if line.strip().startswith("_rt.batch_forms.add(_hook_predicate, "))
    start = registered.find("guard=")
    return (None if start < 0 else registered[start:-len("))")]), "s_closed = _rt.row_state(s_closed)" in source


def test_plain_plugin_state_read_at_the_nodes_name_is_row_state():
    for read in ("closed[node.name]", "closed.get(node.name, false)", "node.name in closed"):
        guard, wrapped = _row_state_guard(f'    fail "closed" when {read}')
        assert guard is not None and guard.endswith(": False") and wrapped, read


def test_state_read_elsewhere_holding_lists_or_assigned_whole_is_not_row_state():
    for read in ('closed.get("n1", false)', "len(cards.get(node.name, [])) > 0", "swapped.get(node.name, false)",
                 "len(closed) > 1"):
        guard, wrapped = _row_state_guard(f'    fail "closed" when {read}')
        assert guard is None and not wrapped, read


def test_a_row_state_logs_the_row_of_each_node_whose_entry_changes():
    from fumarole.runtime.framework.row_state import RowState

    columns = _columns(1000.0, 2000.0, 3000.0)
    state = RowState({"n0": 1}, columns.touch_name)
    state["n2"] = 5
    state["job-a"] = 3  # no node's name: no row
    state.pop("n0")
    state.update({"n1": 2})
    assert columns.log == [0, 2, 0, 1] and dict(state) == {"n2": 5, "job-a": 3, "n1": 2}


_CLOSING = """plugin closing

# Once a pod is placed, every other node refuses pods: a state change on nodes no placement touches.
state closed: map[string, bool]

on allocate(task):
    for node in nodes:
        closed[node.name] = node.name != task.node_name

on predicate(task, node):
    fail "closed" when closed.get(node.name, false)
"""


def test_a_memoised_predicate_sees_row_state_change_on_rows_no_placement_touched(tmp_path):
    import yaml

    from benchmarks.objects import container, gang_pod, queue_object
    from fumarole.runtime.authoring.scenario import decisions_as_expect
    from fumarole.runtime.bundles.bundle import load_bundle
    from fumarole.runtime.framework.lifecycle import new_session, run_session
    from fumarole.runtime.ingest.kube import cluster_from_objects

    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "closing.policy").write_text(_CLOSING)
    (tmp_path / "bundle.yaml").write_text(yaml.safe_dump({
        "apiVersion": "fumarole/v1", "kind": "PolicyBundle", "metadata": {"name": "closing", "revision": "1"},
        "uses": ["volcano"], "sources": ["plugins/*.policy"], "actions": ["enqueue", "allocate"],
        "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}]},
                  {"plugins": [{"name": "predicates"}, {"name": "nodeorder"}, {"name": "closing"}]}]}))
    bundle = load_bundle(tmp_path)
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    objects: list[dict] = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
                            "status": {"allocatable": alloc, "capacity": alloc}} for i in range(3)]
    objects.append(queue_object("default", {"weight": 1}))
    objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                    "metadata": {"name": "j", "namespace": "ns"}, "spec": {"queue": "default", "minMember": 3}})
    objects += [gang_pod(f"j-{p}", "ns", f"u{p}", "j", {"containers": [container(1, "1Gi")]}) for p in range(3)]
    made = {engine: decisions_as_expect(run_session(new_session(bundle, cluster_from_objects(objects), now=0.0,
                                                                engine=engine)))
            for engine in ("fast", "reference")}
    assert made["fast"] == made["reference"]
    assert len({node for node in made["fast"]["binds"].values()}) == 1, made["fast"]
