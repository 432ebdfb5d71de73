"""`fumarole diff`: the decisions only one of two bundles makes on a cluster, each explained; exit codes for CI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fumarole.runtime.authoring.decision_diff import Decision, diff_decisions
from fumarole.runtime.framework.session import Decisions

ROOT = Path(__file__).resolve().parent.parent
TWO_QUEUES = ROOT / "examples/two-queues"
SITE = ROOT / "examples/site-min-runtime"
DEFAULT_CONF = ROOT / "policies/volcano/volcano-scheduler.conf"
AT_1230 = "2026-11-21T12:30:00Z"


def diff(cli, base: Path, candidate: Path, *extra: str):
    return cli("diff", str(TWO_QUEUES / "cluster.yaml"), "--base", str(base), "--candidate", str(candidate),
               "--now", AT_1230, *extra)


def test_decision_diff_is_a_multiset_difference_in_each_sides_order():
    base, candidate = Decisions(), Decisions()
    base.binds = [("a/p-0", "n1"), ("a/p-1", "n2")]
    candidate.binds = [("a/p-1", "n2"), ("a/p-0", "n2")]
    base.evictions = [("b/q-0", "reclaim")]
    candidate.evictions = [("b/q-0", "preempt")]
    base.phases = candidate.phases = {"a/p": "Running"}
    result = diff_decisions(base, candidate)
    assert result.only_base == (Decision("bind", "a/p-0", "n1"), Decision("evict", "b/q-0", "reclaim"))
    assert result.only_candidate == (Decision("bind", "a/p-0", "n2"), Decision("evict", "b/q-0", "preempt"))
    assert result.same == 2
    assert result.summary() == "4 decisions differ: 2 (1 bind, 1 evict) only in base, " \
                               "2 (1 bind, 1 evict) only in candidate; 2 the same"
    assert diff_decisions(base, base).summary() == "no difference: 4 decisions the same"


def test_site_min_runtime_against_volcanos_configuration_lists_the_evictions_that_differ(cli):
    result = diff(cli, TWO_QUEUES / "volcano-scheduler.conf", SITE, "-o", "json")
    assert result.code == 0, result.err
    document = json.loads(result.out)
    assert [(d["kind"], d["subject"], d["value"]) for d in document["onlyInBase"]] == \
        [("evict", "research/sweep-2", "reclaim")]
    assert [(d["kind"], d["subject"], d["value"]) for d in document["onlyInCandidate"]] == \
        [("evict", "research/sweep-0", "reclaim")]
    assert document["summary"] == "2 decisions differ: 1 (1 evict) only in base, 1 (1 evict) only in candidate; " \
                                  f"{document['same']} the same"
    assert document["base"]["bundle"] == "volcano" and document["candidate"]["bundle"] == "site-min-runtime"
    why = document["onlyInCandidate"][0]["explanation"]
    assert why["summary"] == "research/sweep-0 evicted from node-1 by reclaim"
    assert why["because"][0]["text"].startswith("reclaim evicted it to make room for prod/serving-1")
    assert [b["by"] for b in why["because"][2:4]] == ["gang", "conformance"]
    assert document["onlyInBase"][0]["explanation"]["because"][0]["text"].startswith(
        "reclaim evicted it to make room for prod/serving-0")


def test_site_min_runtime_against_the_default_configuration(cli):
    # Volcano's compiled-in default has no reclaim: the site bundle's evictions and pipelines are its own.
    document = json.loads(diff(cli, DEFAULT_CONF, SITE, "-o", "json").out)
    assert document["onlyInBase"] == []
    assert [(d["kind"], d["subject"]) for d in document["onlyInCandidate"]] == [
        ("evict", "research/sweep-1"), ("evict", "research/sweep-0"),
        ("pipeline", "prod/serving-0"), ("pipeline", "prod/serving-1")]


def test_table_shows_each_side_explained_and_ends_with_the_summary(cli):
    result = diff(cli, TWO_QUEUES / "volcano-scheduler.conf", SITE)
    lines = result.out.splitlines()
    assert lines[0] == f"Base: {TWO_QUEUES / 'volcano-scheduler.conf'} (bundle volcano)"
    assert lines[1] == f"Candidate: {SITE} (bundle site-min-runtime revision 1)"
    assert lines[3:6] == ["Only in base (1)", "  evict research/sweep-2 (reclaim)",
                          "    research/sweep-2 evicted from node-1 by reclaim"]
    assert "Only in candidate (1)" in lines and "  evict research/sweep-0 (reclaim)" in lines
    assert lines[-1].startswith("2 decisions differ: 1 (1 evict) only in base, 1 (1 evict) only in candidate; ")


def test_fail_on_change_exit_codes(cli):
    assert diff(cli, TWO_QUEUES / "volcano-scheduler.conf", SITE, "--fail-on-change").code == 1
    same = diff(cli, SITE, SITE, "--fail-on-change")
    assert same.code == 0 and same.out.splitlines()[-1].startswith("no difference: ")


def test_an_archive_is_compared_like_its_folder(cli, tmp_path):
    archive = tmp_path / "site.tar.gz"
    assert cli("bundle", "build", str(SITE), "--out", str(archive)).code == 0
    from_archive = json.loads(diff(cli, TWO_QUEUES / "volcano-scheduler.conf", archive, "-o", "json").out)
    from_folder = json.loads(diff(cli, TWO_QUEUES / "volcano-scheduler.conf", SITE, "-o", "json").out)
    decided = lambda side: [(d["kind"], d["subject"], d["value"]) for d in side]  # noqa: E731
    assert decided(from_archive["onlyInCandidate"]) == decided(from_folder["onlyInCandidate"]) == \
        [("evict", "research/sweep-0", "reclaim")]
    assert decided(from_archive["onlyInBase"]) == decided(from_folder["onlyInBase"])


def test_bad_input_exits_2_naming_the_file(cli, tmp_path):
    missing = tmp_path / "nothere.conf"
    result = diff(cli, missing, SITE)
    assert result.code == 2 and f"no such bundle or configuration: {missing}" in result.err and "Traceback" not in result.err
    broken = tmp_path / "broken.conf"
    broken.write_text("actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gnag\n")
    result = diff(cli, broken, SITE)
    assert result.code == 2 and f"{broken}:4:" in result.err and "error[C021]" in result.err


def _shown_after(readme: str, heading: str) -> tuple[str, list[str]]:
    """The first ```sh command after ``heading`` and the lines of the output block after it."""
    rest = readme.split(heading, 1)[1]
    command = rest.split("```sh\n", 1)[1].split("```", 1)[0]
    output = rest.split("```sh\n", 1)[1].split("```", 1)[1].split("```\n", 1)[1].split("```", 1)[0]
    return " ".join(command.replace("\\\n", " ").split()), output.splitlines()


@pytest.mark.parametrize("heading", ["**3. See what it changes**", "### One session: explain, diff"])
def test_readme_what_if_examples_print_what_the_readme_shows(cli, heading, monkeypatch):
    monkeypatch.chdir(ROOT)
    command, shown = _shown_after((ROOT / "README.md").read_text(), heading)
    args = command.replace("mysite", "examples/site-min-runtime").split()
    assert args[0] == "fumarole"
    result = cli(*args[1:])
    assert result.code == 0, result.err
    printed = result.out.splitlines()
    assert len(shown) > 5
    assert [line for line in shown if line.strip() != "..." and line not in printed] == []
