"""Budgets are budgets (issue 23, items 3 and 4): every operation that allocates or scans is charged by
its size, the deadline holds however slow one step is, actions have their own step budget, memory
has a budget, and arithmetic on values of unknown type is charged and refused like the typed one.

Each attack ends quickly in its budget error (R001) at the policy line that ran it.
"""

from __future__ import annotations

import ast as py
import re
import resource
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fumarole.policy_lang.compiler import Compiler
from fumarole.policy_lang.types import Type
from fumarole.runtime.api.resource import Resource
from fumarole.runtime.bundles.library import compile_sources
from fumarole.runtime.framework.budget import INTEGER_BITS, VALUE_ITEMS, StepBudget
from fumarole.runtime.framework.namespace import PolicyRuntimeError

from tests.test_sandbox import write_bundle

BIG = "let big = range(200000)\n    let other = range(200000)\n    let text = str(big)\n    let n = 0\n    "
HOOK_BUDGET = "the step budget of one invocation of hook 'open'"


def cpu_seconds() -> float:
    """CPU time of this process and of its children that ended.  The step-budget tests bound the work
    an attack costs with it: a wall-clock bound also counts the other processes of a busy machine."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class _Runtime:
    def __init__(self, budget: StepBudget) -> None:
        self.budget = budget


def open_hook(body: str, budget: StepBudget):
    library = compile_sources([("x.policy", f"plugin x\n\non open:\n    {body}\n")])
    return library.plugins["x"].instantiate(_Runtime(budget), None, {})["open"]


@pytest.mark.parametrize("loop", [
    "n += len(big.copy())",
    "n += len({i: i for i in big}.copy())",
    "n += len({i: i for i in range(1000)}.keys()) + len(big)",
    "n += 1 if 199999 in big else 0",
    "n += 1 if big == other else 0",
    "n += int(sum(big))",
    "n += max(big)",
    "n += len(str(big))",
    "n += len(split(text, \",\"))",
    "n += 1 if \"x\" in text else 0",
])
def test_one_step_never_costs_its_size_uncharged(loop):
    """A loop whose every iteration copies, scans or builds a big value runs out of its hook's steps
    in a few iterations, instead of a step each (which took minutes of a 10M-step budget)."""
    hook = open_hook(BIG + "while true:\n        " + loop, StepBudget(hook_steps=3_000_000, timeout=60))
    started = cpu_seconds()
    with pytest.raises(PolicyRuntimeError, match=HOOK_BUDGET):
        hook()
    assert cpu_seconds() - started < 20


# Two equal strings of 690,000 characters, distinct objects (built for about 2.1M steps).
TWINS = "let text = str(range(100000))\n    let twin = trim_prefix(\"x\" + text, \"x\")\n    let n = 0\n    "


@pytest.mark.parametrize("loop", [
    "n += 1 if text == twin else 0",  # two strings of one length: compared character by character
    "n += 1 if text <= twin else 0",
    "n += len(lower(text))",
    "n += len(trim_space(text)) + len(trim_suffix(text, \"]\"))",
    "n += 1 if starts_with(text, twin) or ends_with(text, twin) else 0",
    "n += 1 if parse_float(text) == none and parse_time(text) == none else 0",
])
def test_string_comparisons_and_functions_are_charged_by_size(loop):
    """Comparing two long strings, or lowering, trimming and parsing one, costs its length: such a
    loop ends in its hook's steps in a few iterations (uncharged: two million iterations, minutes)."""
    hook = open_hook(TWINS + "while true:\n        " + loop, StepBudget(hook_steps=4_000_000, timeout=60))
    started = cpu_seconds()
    with pytest.raises(PolicyRuntimeError, match=HOOK_BUDGET):
        hook()
    assert cpu_seconds() - started < 20



def test_the_deadline_holds_when_each_step_is_slow():
    """The clock is read by charged work, and the watchdog empties the counter at the deadline."""
    hook = open_hook(BIG + "while true:\n        n += len(big.copy())", StepBudget(hook_steps=10 ** 12, timeout=0.5))
    started = time.monotonic()
    with pytest.raises(PolicyRuntimeError, match=r"ran past its deadline \(0.5 s"):
        hook()
    assert time.monotonic() - started < 20  # without the watchdog: never (10**12 steps)


def test_the_watchdog_ends_steps_that_are_slow_and_uncharged():
    """Even a step the runtime does not charge for (here: a sleep) cannot outlast the deadline by a chunk."""
    budget = StepBudget(timeout=0.3)
    started = time.monotonic()
    with pytest.raises(PolicyRuntimeError, match="ran past its deadline"):
        while True:  # as compiled loops do: ``_B.left -= 1`` and a test
            time.sleep(0.005)
            budget.left -= 1
            if budget.left < 0:
                budget.spent()
    assert time.monotonic() - started < 10  # 10,000 steps of 5 ms before the first check would be 50 s


def test_renew_gives_a_fresh_deadline_and_steps():
    """The extender's verbs each run with the whole budget on the session kept open."""
    budget = StepBudget(timeout=0.2, session_steps=50_000)
    budget.charge(40_000)
    time.sleep(0.3)
    budget.renew()
    budget.charge(40_000)  # neither the old deadline nor the old steps count any more
    with pytest.raises(PolicyRuntimeError, match=r"the session's step budget ran out \(50,000 steps"):
        budget.charge(20_000)


def test_a_value_past_the_size_budget_is_refused_before_it_is_built():
    budget = StepBudget(hook_steps=10 ** 12, session_steps=10 ** 12, action_steps=10 ** 12)
    with pytest.raises(PolicyRuntimeError, match=f"range\\(\\): a list of {VALUE_ITEMS + 1:,} items would pass "
                                                 "the size budget"):
        budget.range(VALUE_ITEMS + 1)
    half = "a" * (VALUE_ITEMS // 2 + 1)
    with pytest.raises(PolicyRuntimeError, match="`\\+`: a string of .* characters would pass the size budget"):
        budget.concat(half, half)


def test_memory_kept_across_steps_runs_into_the_memory_budget():
    """``keep.append(big.copy())`` within the step budget used to reach 2.9 GB."""
    hook = open_hook("let big = range(1000000)\n    let keep = [[0]]\n    while true:\n        keep.append(big.copy())",
                     StepBudget(hook_steps=10 ** 12, memory_bytes=96 * 2 ** 20))
    with pytest.raises(PolicyRuntimeError, match=r"the session's memory budget ran out \(96 MiB"):
        hook()


def test_a_huge_range_in_an_action_is_a_budget_error_not_memory_error(cli, root, tmp_path):
    result = run_action(cli, root, tmp_path, "    for i in range(1900000000):\n        pass\n")
    assert result.code == 2 and "Traceback" not in result.err and "MemoryError" not in result.err
    assert "spin.policy:4:5: error[R001]: policy failed while running: the step budget of one invocation of " \
           "action hook 'execute' ran out (500,000,000 steps" in result.err


def test_a_copy_loop_in_an_action_stops_at_the_session_timeout(cli, root, tmp_path):
    """Before: the clock was read every 10,000 steps, one copy each: 365 s with --session-timeout 5."""
    started = cpu_seconds()
    result = run_action(cli, root, tmp_path, "    let big = range(1000000)\n    let n = 0\n    while true:\n"
                                             "        n += len(big.copy())\n", "--session-timeout", "10")
    assert result.code == 2 and "Traceback" not in result.err
    # steps now measure the copies' work, so the action's step budget may come first on a fast machine
    assert re.search(r"spin\.policy:\d+:\d+: error\[R001\]: policy failed while running: (the session ran past "
                     r"its deadline \(10 s, --session-timeout\)|the step budget of one invocation of action hook "
                     r"'execute' ran out)", result.err), result.err
    assert cpu_seconds() - started < 90  # the whole command (before: over 300 s)


def test_each_replay_session_has_the_session_timeout(cli, root, tmp_path):
    bundle = spinning_bundle(tmp_path, "    let n = 0\n    while true:\n        n += 1\n")
    result = cli("replay", str(root / "examples/traces/two-queues.yaml"), "--bundle", str(bundle),
                 "--out", str(tmp_path / "out"), "--session-timeout", "0.5")
    assert result.code == 2 and "Traceback" not in result.err
    assert "spin.policy:5:5: error[R001]: policy failed while running: the session ran past its deadline " \
           "(0.5 s, --session-timeout)" in result.err


def run_action(cli, root, tmp_path, body: str, *options: str):
    bundle = spinning_bundle(tmp_path, body)
    return cli("run", str(root / "examples/cluster.yaml"), "--bundle", str(bundle), *options)


def spinning_bundle(tmp_path, body: str):
    """A bundle whose action ``spin`` runs ``body`` after enqueue."""
    bundle = tmp_path / "b"
    write_bundle(bundle, "plugin x\n\non open:\n    pass\n")
    (bundle / "actions").mkdir()
    (bundle / "actions/spin.policy").write_text("action spin\n\non execute:\n" + body)
    (bundle / "bundle.yaml").write_text((bundle / "bundle.yaml").read_text()
                                        .replace("sources: [plugins/*.policy]",
                                                 "sources: [plugins/*.policy, actions/*.policy]")
                                        .replace("actions: [enqueue, allocate]", "actions: [enqueue, spin]"))
    return bundle


# -- arithmetic whose operand types the checker could not tell ------------------------------------

@pytest.mark.parametrize("op, left, right, refusal", [
    ("*", "ab", 10 ** 9, "`*` is not defined for string and int"),
    ("*", [0], 10 ** 9, "`*` is not defined for list and int"),
    ("%", "%0999999999d", 1, "`%` is not defined for string and int"),
    ("%", 2.5, 2, "`%` needs two ints"),
    ("+", "a", [1], "`+` is not defined for string and list"),
    ("-", "ab", "a", "`-` is not defined for string and string"),
    ("+", True, 1, "`+` is not defined for bool and int"),
    ("*", 1 << 3000, 1 << 3000, f"an integer would grow past {INTEGER_BITS:,} bits"),
])
def test_operate_refuses_what_the_typed_operators_refuse(op, left, right, refusal):
    with pytest.raises(PolicyRuntimeError, match=refusal.replace("(", r"\(").replace("*", r"\*").replace("+", r"\+")):
        StepBudget().operate(op, left, right)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from("+-*%"), st.integers(-10 ** 30, 10 ** 30) | st.floats(allow_nan=False, width=32),
       st.integers(-10 ** 30, 10 ** 30) | st.floats(allow_nan=False, width=32))
def test_operate_on_numbers_is_the_plain_operator(op, left, right):
    if op == "%" and not (isinstance(left, int) and isinstance(right, int) and right != 0):
        return
    expected = {"+": left + right, "-": left - right, "*": left * right, "%": left % right if op == "%" else 0}[op]
    got = StepBudget().operate(op, left, right)
    assert got == expected or (got != got and expected != expected)


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=50) | st.lists(st.integers(), max_size=50), st.text(max_size=50) | st.lists(st.integers(),
                                                                                                       max_size=50))
def test_operate_charges_a_concatenation_by_its_size(left, right):
    budget = StepBudget()
    if type(left) is not type(right):
        with pytest.raises(PolicyRuntimeError, match="is not defined for"):
            budget.operate("+", left, right)
        return
    assert budget.operate("+", left, right) == left + right
    assert budget.left == 10_000 - len(left) - len(right)


def test_operate_on_resources_is_the_resource_arithmetic():
    one, two = Resource(1000, 2 ** 30), Resource(2000, 2 ** 31)
    total, double = StepBudget().operate("+", one, two), StepBudget().operate("*", one, 2)
    assert (total.milli_cpu, total.memory) == (3000, 3 * 2 ** 30)
    assert (double.milli_cpu, double.memory) == (2000, 2 ** 31)


@pytest.mark.parametrize("left, right", [("unknown", "int"), ("int", "unknown"), ("unknown", "unknown"),
                                         ("string", "int"), ("list", "int"), ("string", "unknown")])
@pytest.mark.parametrize("op", ["+", "-", "*", "%"])
def test_arithmetic_on_types_not_known_compiles_to_the_charged_operation(op, left, right):
    """No plain Python operator for operands the checker could not tell (`let A = fn() => B` before B)."""
    compiler = object.__new__(Compiler)
    node = compiler._arith(op, Type(left), Type(right), py.Name(id="l", ctx=py.Load()),
                           py.Name(id="r", ctx=py.Load()))
    assert py.unparse(node) == f"_B.operate('{op}', l, r)"


def test_arithmetic_on_known_numbers_stays_a_plain_operator():
    compiler = object.__new__(Compiler)
    node = compiler._arith("+", Type("int"), Type("float"), py.Name(id="l", ctx=py.Load()),
                           py.Name(id="r", ctx=py.Load()))
    assert py.unparse(node) == "l + r"


def test_string_repetition_of_unknown_type_ends_with_a_positioned_error(cli, root, tmp_path):
    """A constant used before its declaration had type unknown and compiled to a plain `*`."""
    policy = ("plugin x\n\nlet A = fn() => B\nlet B = \"ab\"\n\non open:\n    let s = A()\n"
              "    while true:\n        s = s * 1000000\n")
    bundle = tmp_path / "b"
    write_bundle(bundle, policy)
    checked = cli("check", str(bundle))
    if checked.code != 0:  # the checker names B before its declaration: nothing unknown reaches the compiler
        assert "x.policy:3:" in checked.out
        return
    result = cli("run", str(root / "examples/cluster.yaml"), "--bundle", str(bundle))
    assert result.code == 2 and "Traceback" not in result.err
    assert "x.policy:9:9: error[R001]: policy failed while running: `*` is not defined for string and int" \
        in result.err


GROWING = ["s = s + s", "l = l + l", "n += len(l.copy())", "n += len(str(l))", "n += len(m.keys())",
           "m = {i: i for i in l}", "n += 1 if n in l else 0", "l.append(n)", "n += len(split(s, \"a\"))",
           "n += len(m.copy()) + len(m.values())", "n += 1 if l == l.copy() else 0"]


@settings(max_examples=10, deadline=None)
@given(st.lists(st.sampled_from(GROWING), min_size=1, max_size=4))
def test_any_loop_of_growing_operations_ends_in_a_budget(statements):
    """Whatever mix of building, copying and scanning a loop does, it ends in a budget error, quickly."""
    body = "\n        ".join(statements)
    hook = open_hook(f"let s = \"ab\"\n    let l = [1, 2]\n    let m = {{1: 1}}\n    let n = 0\n    while true:\n"
                     f"        {body}", StepBudget(hook_steps=2_000_000, memory_bytes=512 * 2 ** 20))
    started = cpu_seconds()
    with pytest.raises(PolicyRuntimeError, match="step budget of one invocation|size budget|memory budget"):
        hook()
    assert cpu_seconds() - started < 20


# d30 makes 2^30 calls and not one loop; so does e30, and its batch form (the fast engine's) too.
CHAIN = "def d0(x: int) -> int = x\n" + "".join(f"def d{i}(x: int) -> int = d{i - 1}(x) + d{i - 1}(x)\n"
                                                 for i in range(1, 31))
NODE_CHAIN = "def e0(node: Node) -> float = node.idle.cpu\n" + "".join(
    f"def e{i}(node: Node) -> float = e{i - 1}(node) + e{i - 1}(node)\n" for i in range(1, 31))


def test_a_chain_of_definitions_calling_each_other_twice_is_charged():
    """Each definition that calls others is a step per call."""
    library = compile_sources([("x.policy", f"plugin x\n\n{CHAIN}\non open:\n    let n = d30(1)\n")])
    hook = library.plugins["x"].instantiate(_Runtime(StepBudget(hook_steps=1_000_000)), None, {})["open"]
    started = cpu_seconds()
    with pytest.raises(PolicyRuntimeError, match=HOOK_BUDGET):
        hook()
    assert cpu_seconds() - started < 20


def test_function_values_calling_each_other_twice_are_charged():
    lets = "".join(f"    let f{i} = fn(x: int) => f{i - 1}(x) + f{i - 1}(x)\n" for i in range(1, 31))
    hook = open_hook("let f0 = fn(x: int) => x\n" + lets + "    let n = f30(1)",
                     StepBudget(hook_steps=1_000_000))
    started = cpu_seconds()
    with pytest.raises(PolicyRuntimeError, match=HOOK_BUDGET):
        hook()
    assert cpu_seconds() - started < 20


SITE_AFTER_PREDICATES = ("apiVersion: fumarole/v1\nkind: PolicyBundle\nmetadata: {name: b}\nuses: [volcano]\n"
                         "sources: [plugins/*.policy]\nactions: [enqueue, allocate]\n"
                         "tiers:\n- plugins: [{name: priority}, {name: gang}]\n"
                         "- plugins: [{name: predicates}, {name: proportion}, {name: nodeorder}, {name: x}]\n")


@pytest.mark.parametrize("hook_body, lines, engine", [
    ("    fail \"never\" when d30(1) < 0\n", range(4, 34), "fast"),  # any definition of the chain
    ("    fail \"never\" when e30(node) < 0\n", range(35, 65), "fast"),
    ("    fail \"never\" when e30(node) < 0\n", range(35, 65), "reference"),
    ("    let n = 0\n    while true:\n        n += 1\n", range(66, 69), "fast"),
])
def test_a_predicate_that_never_ends_is_refused_where_it_spends_the_budget(root, tmp_path, hook_body, lines, engine):
    """The session's deadline ends a predicate that never ends, calls alone or a loop, and names the
    site's own line.  Its batch scan of the nodes runs the site's hook lane by lane; that scan's
    fallback to the node-by-node one must not retry a spent budget: the retry would trip it at
    once in the predicates plugin, which runs first, and name that instead."""
    bundle = tmp_path / "b"
    (bundle / "plugins").mkdir(parents=True)
    (bundle / "bundle.yaml").write_text(SITE_AFTER_PREDICATES)
    (bundle / "plugins/x.policy").write_text(f"plugin x\n\n{CHAIN}{NODE_CHAIN}\non predicate(task, node):\n"
                                             f"{hook_body}")
    started = cpu_seconds()  # the child's start-up included: seconds of CPU, against 2^30 calls without a budget
    result = subprocess.run([sys.executable, "-m", "fumarole.runtime.cli.main", "run", "--engine", engine,
                             str(root / "examples/cluster.yaml"), "--bundle", str(bundle), "--session-timeout", "1"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 2 and cpu_seconds() - started < 30, result.stderr
    found = re.fullmatch(r".*/x\.policy:(\d+):(\d+): error\[R001\]: policy failed while running: (.*)\n", result.stderr)
    assert found, result.stderr
    assert int(found[1]) in lines
    assert "ran past its deadline (1 s, --session-timeout)" in found[3] \
        or "the step budget of one invocation of hook 'predicate' ran out" in found[3]  # a machine's speed


# An open hook that never ends; each iteration is slow enough that the hook's 10M steps take far
# longer than the half-second deadlines below, so the deadline is what ends it.
SLOW_SPIN = "plugin x\n\non open:\n    let n = 0\n    while true:\n" + "        n += 1\n" * 30


def _spinning_bundle(folder):
    write_bundle(folder, SLOW_SPIN)
    return folder


def test_sweep_passes_its_session_timeout_to_every_replay(cli, root, tmp_path):
    bundle = _spinning_bundle(tmp_path / "b")
    spec = tmp_path / "sweep.yaml"
    spec.write_text(f"kind: Sweep\ntraces: [{root / 'examples/traces/two-queues.yaml'}]\nbundles: [{bundle}]\n"
                    "options: {period: 60s}\n")
    started = cpu_seconds()
    result = cli("sweep", str(spec), "--workers", "1", "--session-timeout", "0.5", "--out", str(tmp_path / "out"))
    assert result.code == 2 and cpu_seconds() - started < 60, result.err
    assert re.search(r"x\.policy:5:5: error\[R001\]: policy failed while running: the session ran past its "
                     r"deadline \(0\.5 s, --session-timeout\)", result.err), result.err
    assert "Traceback" not in result.err


def test_fumarole_test_fails_a_scenario_past_its_deadline_and_goes_on(cli, root, tmp_path):
    bundle = _spinning_bundle(tmp_path / "b")
    cases = tmp_path / "cases"
    cases.mkdir()
    for name in ("a-spins", "b-spins"):
        (cases / f"{name}.yaml").write_text(f"name: {name}\nbundle: {bundle}\n"
                                           f"cluster: {root / 'examples/cluster.yaml'}\nexpect:\n  evicted: []\n")
    started = cpu_seconds()
    result = cli("test", str(cases), "--session-timeout", "0.5")
    assert result.code == 1 and cpu_seconds() - started < 60, result.err
    failures = [line for line in result.out.splitlines() if line.startswith("FAIL")]
    assert len(failures) == 2, result.out
    for name, line in zip(("a-spins", "b-spins"), failures):
        assert re.fullmatch(rf"FAIL {name} \(.*/{name}\.yaml:1\): cannot run: .*/x\.policy:5:5: the session ran "
                            r"past its deadline \(0\.5 s, --session-timeout\)", line), line
    assert result.out.splitlines()[-1] == "0 passed, 2 failed"


def test_fumarole_test_has_a_deadline_by_default():
    from fumarole.runtime.cli.main import build_parser

    args = build_parser().parse_args(["test", "cases/"])
    assert args.session_timeout == 60.0
