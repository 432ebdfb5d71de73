"""Explanations a site can trust, checked on every example bundle's scenarios with both engines:
node scores as the action summed them, every quoted rule found at the position cited, every
condition said to be true true in that session, every deciding rule in the hook's own body."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fumarole.runtime.authoring.explanations import Explainer
from fumarole.runtime.authoring.scenario import load_scenario
from fumarole.runtime.framework.lifecycle import run_session

ROOT = Path(__file__).resolve().parent.parent
CASES = sorted(ROOT.glob("examples/*/tests/*.yaml"))
# Both engines where node scores decide; the fast engine alone elsewhere, to keep the suite quick.
ENGINES = [(case, "fast") for case in CASES] + [(case, "reference") for case in CASES
                                                 if case.parent.parent.name in ("site-node-weight", "site-gpu-model")]
QUOTED_TRUE = re.compile(r"`([^`]+)` was true")


def explained(case: Path, engine: str):
    scenario = load_scenario(case)
    explainer = Explainer(scenario.bundle)
    session = explainer.session(scenario.cluster, scenario.now, options=scenario.options,
                                process_state=scenario.process_state.copy(), engine=engine)
    decisions = run_session(session)
    return explainer, session, explainer.explain(session, decisions)


def source_line(location: str) -> tuple[str, int]:
    file, line, col = location.rsplit(":", 2)
    path = Path(file) if Path(file).is_absolute() else ROOT / file
    if not path.exists():
        path = next(ROOT.glob(f"examples/*/{file}"), path)
    return path.read_text().splitlines()[int(line) - 1], int(col)


def squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.mark.parametrize(("case", "engine"), ENGINES, ids=[f"{c.parent.parent.name}/{c.stem}-{e}" for c, e in ENGINES])
def test_every_explanation_says_what_happened(case: Path, engine: str):
    explainer, session, explanations = explained(case, engine)
    probes, tracer = explainer.probes, session.observer
    sites = {site.location: (n, site) for n, site in enumerate(probes.sites)}
    for explanation in explanations:
        for reason in explanation.because:
            if not reason.at or reason.at.startswith("?"):
                continue
            line, col = source_line(reason.at)
            for condition in QUOTED_TRUE.findall(reason.text):
                number, site = sites[reason.at]
                assert squeezed(site.text) == squeezed(condition), reason.text
                assert probes.counts[number][1] > 0, f"{reason.text}: never true in this session"
                assert squeezed(line[col - 1:]).startswith(squeezed(condition)[:10]), (reason.text, line)
    for moves in tracer.moves.values():
        for move in moves:
            if not move.totals:
                continue
            for node, total in move.totals.items():
                assert sum(move.scores.get(node, {}).values()) == pytest.approx(total), (move.task.key, node)
            if move.kind == "Allocated" and move.action == "allocate":
                assert move.totals[move.node] == max(move.totals.values())


def test_scores_count_every_scorer_of_a_plugin(cli, root):
    """nodeorder scores with node_order and batch_node_order: the explanation adds both, and
    the nodes it names are not tied when their totals differ."""
    result = cli("run", str(root / "examples/site-gpu-model/cluster.yaml"), "--bundle",
                 str(root / "examples/site-gpu-model"), "--explain")
    assert "v100-1 had the highest node score: v100-1 467, a100-1 426" in result.out
    assert "nodeorder batch_node_order scored v100-1 467, a100-1 426" in result.out
    assert "tied" not in result.out


def test_a_refusal_cites_the_fail_that_gave_it(cli, root):
    result = cli("run", str(root / "examples/site-gpu-model/cluster.yaml"), "--bundle",
                 str(root / "examples/site-gpu-model"), "--explain")
    assert "gpu_model at `fail \"GPU model \"" in result.out
    assert "gpu_model.policy:32:68]" in result.out  # the `when` condition, not the message


def test_a_veto_through_a_helper_is_quoted_at_the_hook(cli, root):
    result = cli("run", str(root / "examples/site-eviction-patience/cluster.yaml"), "--bundle",
                 str(root / "examples/site-eviction-patience"), "--now", "2026-11-21T12:10:00Z", "--explain")
    assert "(reclaim_candidate): research/sweep-" in result.out
    assert "`has_waited(preemptor)` is false  [" in result.out
    assert "job == none" not in result.out
