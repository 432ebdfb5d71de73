"""Every policy ends (issue 8, section 3): steps, sizes, integer growth, recursion and the session deadline.

Each runaway ends with R001 naming the policy line and the budget that ran out, exit 2, no traceback.
"""

from __future__ import annotations

import pytest

from fumarole.runtime.bundles.library import compile_sources
from fumarole.runtime.framework.budget import StepBudget
from fumarole.runtime.framework.namespace import PolicyRuntimeError

from tests.test_sandbox import write_bundle


def run_bundle(cli, root, tmp_path, policy: str, *options: str):
    bundle = write_bundle(tmp_path / "b", policy)
    checked = cli("check", str(bundle))
    assert checked.code == 0, checked.out  # `check` accepts them all: they are bounded while running
    return cli("run", str(root / "examples/cluster.yaml"), "--bundle", str(bundle), *options)


def test_nested_while_true_ends_with_the_hook_budget(cli, root, tmp_path):
    policy = "plugin x\n\non open:\n    let n = 0\n    while true:\n        while true:\n            n += 1\n"
    result = run_bundle(cli, root, tmp_path, policy)
    assert result.code == 2 and "Traceback" not in result.err
    assert "x.policy:6:9: error[R001]: policy failed while running: the step budget of one invocation of " \
           "hook 'open' ran out (10,000,000 steps" in result.err


@pytest.mark.parametrize("body, line, budget", [
    ("for i in range(2000000000):\n        pass", 4, "the step budget of one invocation of hook 'open'"),
    ("let l = [i * 2 for i in range(100000000)]", 4, "the step budget of one invocation of hook 'open'"),
    ("let l = [0]\n    while true:\n        l = l + l", 6, "the step budget of one invocation of hook 'open'"),
    ("let s = \"ab\"\n    while true:\n        s = s + s", 6, "the step budget of one invocation of hook 'open'"),
    ("let x = 3\n    while true:\n        x = x * x", 6, "an integer would grow past 4,096 bits"),
    ("let x = 3\n    while true:\n        x *= x", 6, "an integer would grow past 4,096 bits"),
    ("let m = {0: 0}\n    for k in range(100):\n        m = {i: i for i in range(len(m) * 1000)}", 6,
     "the step budget of one invocation of hook 'open'"),
    ("let l = [1]\n    for x in l:\n        l.append(x)\n    while len(l) < 3:\n        l.append(1)", 0, ""),
])
def test_each_runaway_ends_with_the_budget_it_ran_out_of(body, line, budget):
    """Quick: a small hook budget shows every kind of runaway ends (the CLI tests use the real sizes)."""
    library = compile_sources([("x.policy", f"plugin x\n\non open:\n    {body}\n")])
    session = _Runtime(StepBudget(hook_steps=100_000))
    hooks = library.plugins["x"].instantiate(session, None, {})
    if not budget:  # a loop appending to its own list sees only the items there at the start, as Go's range
        hooks["open"]()
        return
    with pytest.raises(PolicyRuntimeError, match=budget):
        hooks["open"]()


class _Runtime:
    def __init__(self, budget: StepBudget) -> None:
        self.budget = budget


def test_a_huge_range_fails_at_once_without_building_it(cli, root, tmp_path):
    result = run_bundle(cli, root, tmp_path, "plugin x\n\non open:\n    for i in range(2000000000):\n        pass\n")
    assert result.code == 2
    assert "x.policy:4:5: error[R001]: policy failed while running: the step budget of one invocation of hook " \
           "'open' ran out" in result.err


def test_recursion_through_a_function_in_state_is_bounded(cli, root, tmp_path):
    policy = ("plugin x\n\nstate f: fn[int, int]\n\non open:\n    f = fn(x: int) => f(x + 1)\n"
              "    let y = f(1)\n    pass when y == 0\n")
    result = run_bundle(cli, root, tmp_path, policy)
    assert result.code == 2 and "Traceback" not in result.err
    assert "x.policy:6:23: error[R001]: policy failed while running: the call depth budget ran out" in result.err


def test_session_timeout_ends_an_action_that_never_ends(cli, root, tmp_path):
    bundle = tmp_path / "b"
    write_bundle(bundle, "plugin x\n\non open:\n    pass\n")
    (bundle / "actions").mkdir()
    (bundle / "actions/spin.policy").write_text("action spin\n\non execute:\n    let n = 0\n    while true:\n"
                                                "        n += 1\n")
    (bundle / "bundle.yaml").write_text((bundle / "bundle.yaml").read_text()
                                        .replace("sources: [plugins/*.policy]", "sources: [plugins/*.policy, actions/*.policy]")
                                        .replace("actions: [enqueue, allocate]", "actions: [enqueue, spin]"))
    result = cli("run", str(root / "examples/cluster.yaml"), "--bundle", str(bundle), "--session-timeout", "0.5")
    assert result.code == 2 and "Traceback" not in result.err
    assert "spin.policy:5:5: error[R001]: policy failed while running: the session ran past its deadline " \
           "(0.5 s, --session-timeout)" in result.err


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
@pytest.mark.parametrize("command", ["run", "serve"])
def test_session_timeout_must_be_a_positive_number(cli, root, value, command):
    result = cli(command, *([str(root / "examples/cluster.yaml")] if command == "run" else []),
                 f"--session-timeout={value}")
    assert result.code == 2 and "Traceback" not in result.err
    assert f"argument --session-timeout: must be a positive number of seconds, not '{value}'" in result.err


def test_the_session_budget_counts_every_hook_together():
    library = compile_sources([("x.policy", "plugin x\n\non open:\n    for i in range(5000):\n        pass\n")])
    runtime = _Runtime(StepBudget(session_steps=40_000, hook_steps=1_000_000))
    hooks = library.plugins["x"].instantiate(runtime, None, {})
    for _ in range(3):
        hooks["open"]()  # 10,000 steps each (range, then the loop)
    with pytest.raises(PolicyRuntimeError, match=r"the session's step budget ran out \(40,000 steps"):
        for _ in range(3):
            hooks["open"]()
