"""Unknown keys in a scenario are errors (issue 8, section 6): a test that asserts nothing must fail."""

from __future__ import annotations

from pathlib import Path

import pytest
from fumarole.runtime.authoring.scenario_keys import unknown_keys
from fumarole.runtime.ingest.yamlpos import load

HEAD = "name: c\nscheduler: {actions: allocate, tiers: [{plugins: [{name: gang}]}]}\nobjects: []\n"
CONFORMANCE = Path(__file__).resolve().parent / "conformance"  # the repository's copy


@pytest.mark.parametrize("tail, where, message, hint", [
    ("expect:\n  bindz: {}\n", "5:3", "unknown key 'bindz' in `expect`", "did you mean 'binds'?"),
    ("expect: {}\nexpekt: {}\n", "5:1", "unknown key 'expekt' in a scenario", "did you mean 'expect'?"),
    ("expectHooks:\n- {hook: predicate, task: ns/p, feasibel: []}\n", "5:33",
     "unknown key 'feasibel' in a `predicate` call", "did you mean 'feasible'?"),
    ("expectHooks:\n- {hook: nodeOrdr, task: ns/p}\n", "5:10", "unknown hook 'nodeOrdr'", "did you mean 'nodeOrder'?"),
])
def test_unknown_keys_fail_test_and_check_with_their_position(cli, tmp_path, tail, where, message, hint):
    path = tmp_path / "case.yaml"
    path.write_text(HEAD + tail)
    tested = cli("test", str(path))
    assert tested.code == 2 and f"case.yaml:{where}: error[S006]: {message}" in tested.out
    checked = cli("check", str(path))
    assert checked.code == 1 and f"case.yaml:{where}: error[S006]: {message}" in checked.out
    assert f"hint: {hint}" in checked.out


def test_every_conformance_case_uses_only_known_keys():
    files = sorted(CONFORMANCE.glob("cases/**/*.yaml"))
    assert len(files) > 100
    problems = [d.headline() for f in files for d in unknown_keys(load(f.read_text()), str(f))]
    assert problems == []
