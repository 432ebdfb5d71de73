"""The F codes (files, arguments, internal errors, live clusters, extras) and the scenario-shape
codes S002 and S006: each problem from a real input, pinned whole -- code, file, line, column
and message -- as docs/diagnostics.md shows them.  The constructors are policy_lang/file_errors.py
and runtime/authoring/scenario_errors.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from loopback_api import JsonHandler, loopback_server, write_kubeconfig

ROOT = Path(__file__).resolve().parent.parent
TRACE = str(ROOT / "examples" / "traces" / "two-queues.yaml")
CLUSTER = str(ROOT / "examples" / "cluster.yaml")
CONF = "scheduler: {actions: allocate, tiers: [{plugins: [{name: gang}]}]}\n"
EXTENDER = CONF + "expect: {}\nextenders:\n  /x:\n"

# A headline as every command prints it; `fumarole test` prints it after "cannot run: ".
_HEADLINE = re.compile(r"(?:^|cannot run: )(?P<file>command line|[^\s:]+)(?::(?P<line>\d+):(?P<col>\d+))?: "
                       r"error\[(?P<code>\w+)\]: (?P<message>.*)$", re.M)

Pinned = tuple[str, str, "int | None", "int | None", str]


def headlines(text: str) -> list[Pinned]:
    """Each error as (code, file, line, column, message); line and column None for a whole file."""
    return [(m["code"], m["file"], int(m["line"]) if m["line"] else None, int(m["col"]) if m["col"] else None,
             m["message"]) for m in _HEADLINE.finditer(text)]


def write(folder: Path, files: dict[str, str | bytes]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if text is None:
            path.mkdir()
        elif isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)


# (command line, files written in the working folder, the exit code, the one error it reports);
# {tmp} in a message stands for the working folder.
CASES: dict[str, tuple[list[str], dict, int, Pinned]] = {
    # F001 a file that cannot be read
    "unreadable/not-text": (["check", "a.policy"], {"a.policy": b"plugin x\n\xff\xfe\n"}, 2,
                            ("F001", "a.policy", 2, 1, "cannot read a.policy: not UTF-8 text (byte 0xff: invalid start byte)")),
    "unreadable/scenario-cluster": (["test", "c.yaml"], {"c.yaml": CONF + "cluster: sub\nexpect: {}\n", "sub": None}, 2,
                                    ("F001", "c.yaml", 2, 10, "cannot read sub: Is a directory")),
    "unreadable/bundle-source": (["check", "b"], {"b/bundle.yaml": "apiVersion: fumarole/v1\nkind: PolicyBundle\n"
                                                                  "metadata: {name: b}\nsources: [d.policy]\n",
                                                  "b/d.policy": None}, 2,
                                 ("F001", "{tmp}/b/d.policy", None, None, "cannot read {tmp}/b/d.policy: Is a directory")),
    "no-such-bundle": (["check", "c.yaml"], {"c.yaml": "bundle: nothere\nexpect: {}\n"}, 2,
                       ("F001", "c.yaml", 1, 9, "cannot read bundle {tmp}/nothere: no such bundle")),
    "scenario-cluster-unreadable": (["check", "c.yaml"], {"c.yaml": CONF + "cluster: sub\nexpect: {}\n", "sub": None}, 2,
                                    ("F001", "c.yaml", 2, 10, "cannot read cluster sub: Is a directory")),
    "trace-cluster-unreadable": (["replay", "t.yaml", "--out", "o"], {"t.yaml": "kind: Trace\ncluster: nothere.yaml\n"}, 2,
                                 ("F001", "t.yaml", 2, 10,
                                  "cannot read the trace's cluster 'nothere.yaml': No such file or directory")),
    "no-bundle-or-configuration": (["replay", TRACE, "--bundle", "nothere.conf", "--out", "o"], {}, 2,
                                   ("F001", "nothere.conf", None, None, "no such bundle or configuration: nothere.conf")),
    # F002 a bad command-line argument
    "no-such-path": (["check", "missing.policy"], {}, 2,
                     ("F002", "missing.policy", None, None, "no such file or folder: missing.policy")),
    "not-positive/period": (["replay", TRACE, "--period", "0s", "--out", "o"], {}, 2,
                            ("F002", "fumarole", None, None, "--period must be more than zero")),
    "not-positive/max-wall": (["replay", TRACE, "--max-wall", "0", "--out", "o"], {}, 2,
                              ("F002", "fumarole", None, None, "--max-wall must be more than zero")),
    "below-minimum": (["trace", "synth", "burst", "--nodes", "0", "--out", "t.yaml"], {}, 2,
                      ("F002", "fumarole", None, None, "--nodes must be at least 1")),
    "bad-distribution": (["trace", "cut", CLUSTER, "--run-time", "bogus", "--out", "t.yaml"], {}, 2,
                         ("F002", "fumarole", None, None, "--run-time 'bogus': expected fixed:D, uniform:A,B or "
                                                          "exp:MEAN with durations such as 30m")),
    "bad-command-line": (["check", "--nope"], {}, 2,
                         ("F002", "command line", 1, 16, "'fumarole check' has no option --nope")),
    "bad-argument": (["run", "--bundle", "x", "--config", "y", "c.yaml"], {}, 2,
                     ("F002", "fumarole", None, None, "give either --bundle or --config, not both")),
    # F003 not a fumarole input
    "not-an-input": (["check", "notes.txt"], {"notes.txt": "hello\n"}, 2,
                     ("F003", "notes.txt", None, None,
                      "not a policy file, bundle, scheduler configuration, scenario or cluster dump")),
    "not-a-policy-file": (["fmt", "notes.txt"], {"notes.txt": "hello\n"}, 2,
                          ("F003", "notes.txt", None, None, "fmt formats policy files (*.policy)")),
    # S002 a malformed scenario
    "scenario/not-a-mapping": (["test", "s.yaml"], {"s.yaml": "- a\n"}, 2,
                               ("S002", "s.yaml", None, None, "a scenario must be a mapping")),
    "scenario/nothing-expected": (["test", "s.yaml"], {"s.yaml": CONF}, 2,
                                  ("S002", "s.yaml", 1, 1, "a scenario needs `expect` or `expectHooks`")),
    "scenario/no-scheduler": (["check", "s.yaml"], {"s.yaml": "name: x\nexpect: {}\n"}, 1,
                              ("S002", "s.yaml", 1, 1, "a scenario needs `scheduler` or `bundle`")),
    "scenario/no-scheduler-run": (["test", "s.yaml"], {"s.yaml": "name: x\nexpect: {}\n"}, 2,
                                  ("S002", "s.yaml", 1, 1, "a scenario needs `scheduler` or `bundle`")),
    "scenario/expect": (["check", "s.yaml"], {"s.yaml": CONF + "expect: 5\n"}, 1,
                        ("S002", "s.yaml", 2, 9, "`expect` must be a mapping")),
    "scenario/hook-calls": (["check", "s.yaml"], {"s.yaml": CONF + "expectHooks: 5\n"}, 1,
                            ("S002", "s.yaml", 2, 14, "`expectHooks` must be a list of hook calls")),
    "scenario/hook-call": (["check", "s.yaml"], {"s.yaml": CONF + "expectHooks:\n- 5\n"}, 1,
                           ("S002", "s.yaml", 3, 3, "a hook call must be a mapping with `hook`")),
    "scenario/extenders": (["test", "s.yaml"], {"s.yaml": CONF + "expect: {}\nextenders: 5\n"}, 2,
                           ("S002", "s.yaml", 3, 12, "`extenders` must map URL prefixes to their verbs' answers")),
    "scenario/extender": (["test", "s.yaml"], {"s.yaml": CONF + "expect: {}\nextenders:\n  /x: 5\n"}, 2,
                          ("S002", "s.yaml", 4, 7, "extender '/x' must map verbs to answers")),
    "scenario/answer": (["test", "s.yaml"], {"s.yaml": EXTENDER + "    filter: 5\n"}, 2,
                        ("S002", "s.yaml", 5, 13,
                         "extender '/x', verb 'filter': an answer is a mapping of status, body, raw, delay")),
    "scenario/answer-status": (["test", "s.yaml"], {"s.yaml": EXTENDER + "    filter: {status: 42}\n"}, 2,
                               ("S002", "s.yaml", 5, 14, "extender '/x', verb 'filter': status must be an HTTP status code")),
    "scenario/answer-delay": (["test", "s.yaml"], {"s.yaml": EXTENDER + "    filter: {delay: -1}\n"}, 2,
                              ("S002", "s.yaml", 5, 14,
                               "extender '/x', verb 'filter': delay must be a number of seconds from 0 to 10")),
    "scenario/answer-body-and-raw": (["test", "s.yaml"], {"s.yaml": EXTENDER + "    filter: {body: {}, raw: ''}\n"}, 2,
                                     ("S002", "s.yaml", 5, 24,
                                      "extender '/x', verb 'filter': give `body` (JSON) or `raw` (text), not both")),
    "scenario/answer-raw": (["test", "s.yaml"], {"s.yaml": EXTENDER + "    filter: {raw: 5}\n"}, 2,
                            ("S002", "s.yaml", 5, 14, "extender '/x', verb 'filter': raw must be a string")),
    "scenario/answer-checked": (["check", "s.yaml"], {"s.yaml": EXTENDER + "    filter: {status: 42}\n"}, 1,
                                ("S002", "s.yaml", 5, 14, "extender '/x', verb 'filter': status must be an HTTP status code")),
    # S006 an unknown key or hook
    "scenario/unknown-key": (["check", "s.yaml"], {"s.yaml": CONF + "expect: {bindz: {}}\n"}, 1,
                             ("S006", "s.yaml", 2, 10, "unknown key 'bindz' in `expect`")),
    "scenario/unknown-call-key": (["check", "s.yaml"], {"s.yaml": CONF + "expectHooks:\n- {hook: jobOrder, lft: a}\n"}, 1,
                                  ("S006", "s.yaml", 3, 20, "unknown key 'lft' in a `jobOrder` call")),
    "scenario/unknown-hook": (["check", "s.yaml"], {"s.yaml": CONF + "expectHooks:\n- {hook: job_ordr}\n"}, 1,
                              ("S006", "s.yaml", 3, 10, "unknown hook 'job_ordr'")),
    "scenario/answer-unknown-key": (["test", "s.yaml"], {"s.yaml": EXTENDER + "    filter: {stauts: 200}\n"}, 2,
                                    ("S006", "s.yaml", 5, 14, "extender '/x', verb 'filter': unknown key 'stauts' "
                                                              "(known: body, delay, raw, status)")),
    "scenario/answer-unknown-key-checked": (["check", "s.yaml"], {"s.yaml": EXTENDER + "    filter: {stauts: 200}\n"}, 1,
                                            ("S006", "s.yaml", 5, 14, "extender '/x', verb 'filter': unknown key "
                                                                      "'stauts' (known: body, delay, raw, status)")),
}


def _expected(pinned: Pinned, tmp: Path) -> Pinned:
    code, file, line, col, message = pinned
    return code, file.replace("{tmp}", str(tmp)), line, col, message.replace("{tmp}", str(tmp))


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_problem_is_one_error_pinned_whole(cli, tmp_path, monkeypatch, case):
    argv, files, status, pinned = CASES[case]
    write(tmp_path, files)
    monkeypatch.chdir(tmp_path)
    result = cli(*argv)
    assert "Traceback" not in result.out + result.err
    assert result.code == status, result.out + result.err
    assert headlines(result.out + result.err) == [_expected(pinned, tmp_path)]


def test_a_check_stage_that_raises_is_f004_naming_the_file(cli, tmp_path, monkeypatch):
    import fumarole.runtime.authoring.check

    def broken(*args, **kwargs):
        raise ValueError("boom")
    monkeypatch.setattr(fumarole.runtime.authoring.check, "load_cluster", broken)
    write(tmp_path, {"cluster.yaml": "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"})
    monkeypatch.chdir(tmp_path)
    result = cli("check", "cluster.yaml")
    assert result.code == 2
    assert headlines(result.out) == [("F004", "cluster.yaml", None, None, "internal error while checking: ValueError: boom")]


def test_a_format_that_would_change_the_meaning_is_f004_and_leaves_the_file(cli, tmp_path, monkeypatch):
    import fumarole.policy_lang.fmt

    monkeypatch.setattr(fumarole.policy_lang.fmt, "same_tree", lambda *args: False)
    text = "plugin p\n\non job_order(a, b):\n    order by a.priority\n"
    write(tmp_path, {"p.policy": text})
    monkeypatch.chdir(tmp_path)
    result = cli("fmt", "p.policy")
    assert result.code == 2
    assert headlines(result.err) == [("F004", "p.policy", None, None, "internal error: formatting would change this "
                                                                       "file's meaning; left unchanged (please report it)")]
    assert (tmp_path / "p.policy").read_text() == text


def test_a_contained_child_that_raises_is_f004_naming_the_work():
    from fumarole.policy_lang.diagnostics import FumaroleError
    from fumarole.runtime.serve.contained import Containment

    def work() -> int:
        raise KeyError("lost")
    with pytest.raises(FumaroleError) as raised:
        Containment(30).run(work, "bundle compile")
    assert [(d.code, d.file, d.positioned, d.message) for d in raised.value.diagnostics] == [
        ("F004", "bundle compile", False, "internal error in the bundle compile: KeyError: 'lost'")]


def test_a_bundle_that_breaks_the_compiler_is_f004_naming_the_upload(monkeypatch):
    import fumarole.runtime.serve.registry as registry
    from fumarole.policy_lang.diagnostics import FumaroleError

    def broken(*args, **kwargs):
        raise RuntimeError("compiler bug")
    monkeypatch.setattr(registry, "load_artifact", broken)
    with pytest.raises(FumaroleError) as raised:
        registry.BundleRegistry().activate(b"", "upload", persist=False)
    assert [(d.code, d.file, d.positioned, d.message) for d in raised.value.diagnostics] == [
        ("F004", "upload", False, "internal error while compiling the bundle: RuntimeError: compiler bug")]


class _Refusing(JsonHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_json(404, {})


def test_a_live_cluster_that_refuses_is_f005_naming_the_kubeconfig(cli, tmp_path):
    with loopback_server(_Refusing) as server:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.server_address[1])
        result = cli("snapshot", "--kubeconfig", str(kubeconfig), "--out", str(tmp_path / "c.yaml"))
    assert result.code == 2
    assert headlines(result.err) == [("F005", str(kubeconfig), None, None,
                                      "the API server answered 404 to GET /api/v1/nodes")]


def test_a_missing_extra_is_f006(cli, monkeypatch):
    import sys

    for name in [n for n in sys.modules if n == "pygls" or n.startswith("pygls.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pygls", None)
    result = cli("lsp", "--stdio")
    assert result.code == 2
    assert headlines(result.err) == [("F006", "fumarole", None, None,
                                      "the language server needs the 'lsp' extra (pygls is not installed)")]
