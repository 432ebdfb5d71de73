"""`-o json|yaml` on the commands that print a result and used to offer only text: fmt, replay, sweep."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from test_whatif_sweep import _sweep_file

ROOT = Path(__file__).resolve().parent.parent
UNFORMATTED = "plugin p\non predicate(task,node):\n    return none\n"


def test_fmt_check_as_json_names_each_file_and_its_outcome(cli, tmp_path):
    (tmp_path / "a.policy").write_text(UNFORMATTED)
    (tmp_path / "b.policy").write_text("plugin b\n\non predicate(task, node):\n    return none\n")
    (tmp_path / "c.policy").write_text("plugin c\non predicate(task node):\n")
    result = cli("fmt", "--check", "-o", "json", str(tmp_path))
    assert result.code == 2 and result.err == ""  # a syntax error: the command could not do its work
    document = json.loads(result.out)
    outcomes = {Path(f["file"]).name: f["outcome"] for f in document["files"]}
    assert outcomes == {"a.policy": "would reformat", "b.policy": "unchanged"}
    [problem] = document["diagnostics"]
    assert (Path(problem["file"]).name, problem["line"], problem["severity"]) == ("c.policy", 2, "error")
    assert (tmp_path / "a.policy").read_text() == UNFORMATTED  # --check changes nothing


def test_fmt_as_yaml_reports_what_it_rewrote_and_the_diff_mode_carries_the_diff(cli, tmp_path):
    policy = tmp_path / "a.policy"
    policy.write_text(UNFORMATTED)
    diff = yaml.safe_load(cli("fmt", "--diff", "-o", "yaml", str(policy)).out)
    assert diff["files"][0]["outcome"] == "would reformat" and "+on predicate(task, node):" in diff["files"][0]["diff"]
    rewritten = cli("fmt", "-o", "yaml", str(policy))
    assert rewritten.code == 0 and yaml.safe_load(rewritten.out)["files"][0]["outcome"] == "reformatted"
    assert cli("fmt", "--check", str(policy)).code == 0


def test_replay_prints_each_replays_summary_as_one_document(cli, tmp_path):
    result = cli("replay", str(ROOT / "examples/traces/two-queues.yaml"), "--bundle", str(ROOT / "examples/site-min-runtime"),
                 "--compare", str(ROOT / "examples/two-queues/volcano-scheduler.conf"), "--period", "60s",
                 "--out", str(tmp_path / "out"), "-o", "json")
    assert result.code == 0, result.err
    replays = json.loads(result.out)["replays"]
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert [r["bundle"] for r in replays] == [str(ROOT / "examples/site-min-runtime"),
                                             str(ROOT / "examples/two-queues/volcano-scheduler.conf")]
    assert replays[0]["overall"] == metrics["overall"] and replays[1]["overall"] == metrics["compare"]["overall"]
    assert replays[0]["stopped"] == "played out"


def test_sweep_prints_its_rows_as_yaml(cli, tmp_path):
    result = cli("sweep", str(_sweep_file(tmp_path, "{minRuntime: [5m, 3h]}")), "--workers", "1",
                 "--out", str(tmp_path / "out"), "-o", "yaml")
    assert result.code == 0, result.err
    rows = yaml.safe_load(result.out)["replays"]
    assert [(row["minRuntime"], row["evictions"]) for row in rows] == [("5m", 2), ("3h", 0)]


def test_fmt_on_a_file_that_is_not_utf8_is_f001_not_an_internal_error(cli, tmp_path):
    policy = tmp_path / "bad.policy"
    policy.write_bytes(b"plugin p\n\xff\n")
    result = cli("fmt", "--check", str(policy))
    assert result.code == 2 and "internal error" not in result.err
    assert "error[F001]: cannot read" in result.err and "not UTF-8" in result.err
    as_json = json.loads(cli("fmt", "--check", "-o", "json", str(policy)).out)
    assert [d["code"] for d in as_json["diagnostics"]] == ["F001"]
