"""`fumarole lsp` driven over stdio as an editor drives it: diagnostics, completion, hover, definition,
references and formatting, on unsaved buffers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.lsp_client import LspClient

ROOT = Path(__file__).resolve().parent.parent
MISSPELT = """plugin guard

arg min_runtime: duration = 10m from "minRuntime"

on reclaim_candidate(reclaimer, task) = now - task.start_tme >= min_runtime
"""


@pytest.fixture
def bundle(tmp_path) -> Path:
    folder = tmp_path / "site"
    shutil.copytree(ROOT / "examples" / "site-min-runtime", folder)
    return folder


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    """One server for the module, as one editor session: each test opens documents of its own."""
    root = tmp_path_factory.mktemp("workspace")
    lsp = LspClient(root)
    lsp.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
    lsp.notify("initialized", {})
    yield lsp
    assert lsp.close() == 0


def _open(client: LspClient, path: Path, text: str, language: str = "fumarole-policy") -> str:
    uri = path.resolve().as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": language, "version": 1,
                                                            "text": text}})
    return uri


def _diagnostics(client: LspClient, uri: str, nonempty: bool = True) -> list[dict]:
    params = client.wait_for("textDocument/publishDiagnostics",
                             lambda p: p["uri"] == uri and bool(p["diagnostics"]) == nonempty)
    return params["diagnostics"]


def test_a_misspelt_attribute_gets_the_code_and_range_check_gives(client, bundle, cli):
    policy = bundle / "plugins" / "min_runtime.policy"
    uri = _open(client, policy, MISSPELT)  # the unsaved buffer, not the file on disk, is checked
    (d,) = [d for d in _diagnostics(client, uri) if d["code"] == "E101"]
    policy.write_text(MISSPELT)
    report = json.loads(cli("check", "--strict", "-o", "json", str(bundle)).out)
    (expected,) = [e for e in report["diagnostics"] if e["code"] == "E101"]
    assert d["range"] == {"start": {"line": expected["line"] - 1, "character": expected["column"] - 1},
                          "end": {"line": expected["end_line"] - 1, "character": expected["end_column"] - 1}}
    assert d["message"].startswith(expected["message"]) and d["severity"] == 1


def test_fixing_the_buffer_clears_the_diagnostics(client, bundle):
    policy = bundle / "plugins" / "min_runtime.policy"
    uri = _open(client, policy, MISSPELT)
    _diagnostics(client, uri)
    fixed = MISSPELT.replace("start_tme", "start_time")
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"text": fixed}]})
    assert _diagnostics(client, uri, nonempty=False) == []


def test_completion_after_task_dot_lists_the_schema_attributes(client, tmp_path):
    text = "plugin p\n\non reclaim_candidate(reclaimer, task) = task.\n"
    uri = _open(client, tmp_path / "p.policy", text)
    result = client.request("textDocument/completion", {"textDocument": {"uri": uri},
                                                        "position": {"line": 2, "character": 45}})
    items = {i["label"]: i for i in result["items"]}
    assert "start_time" in items and items["start_time"]["detail"] == "float"
    assert "status" in items and "queue" in items


def test_completion_of_hook_names_after_on(client, tmp_path):
    uri = _open(client, tmp_path / "p.policy", "plugin p\n\non recl\n")
    result = client.request("textDocument/completion", {"textDocument": {"uri": uri},
                                                        "position": {"line": 2, "character": 7}})
    assert {"reclaimable", "reclaim_candidate"} <= {i["label"] for i in result["items"]}


def test_hover_on_a_hook_shows_its_combination_rule(client, tmp_path):
    uri = _open(client, tmp_path / "p.policy", "plugin p\n\non reclaimable(r, cs):\n    abstain\n")
    result = client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                   "position": {"line": 2, "character": 5}})
    text = result["contents"]["value"]
    assert "combines with `intersect`" in text and "tiered intersection" in text


def test_hover_on_a_diagnostic_explains_its_code(client, bundle):
    policy = bundle / "plugins" / "min_runtime.policy"
    uri = _open(client, policy, MISSPELT)
    (d,) = [d for d in _diagnostics(client, uri) if d["code"] == "E101"]
    result = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": d["range"]["start"]})
    assert "**E101** unknown attribute" in result["contents"]["value"]


def test_definition_jumps_from_bundle_yaml_to_the_plugin_file(client, bundle):
    manifest = bundle / "bundle.yaml"
    text = manifest.read_text()
    uri = _open(client, manifest, text, "yaml")
    line = next(i for i, row in enumerate(text.splitlines()) if "name: min_runtime" in row)
    col = text.splitlines()[line].index("min_runtime") + 2
    (location,) = client.request("textDocument/definition", {"textDocument": {"uri": uri},
                                                             "position": {"line": line, "character": col}})
    assert location["uri"] == (bundle / "plugins" / "min_runtime.policy").resolve().as_uri()
    assert location["range"]["start"] == {"line": 0, "character": 0}


def test_definition_and_references_of_an_argument(client, bundle):
    policy = bundle / "plugins" / "min_runtime.policy"
    text = policy.read_text()
    uri = _open(client, policy, text)
    rows = text.splitlines()
    use = next(i for i, row in enumerate(rows) if row.startswith("on "))
    col = rows[use].rindex("min_runtime")
    (location,) = client.request("textDocument/definition", {"textDocument": {"uri": uri},
                                                             "position": {"line": use, "character": col}})
    declared = next(i for i, row in enumerate(rows) if row.startswith("arg min_runtime"))
    assert location["range"]["start"]["line"] == declared
    found = client.request("textDocument/references", {"textDocument": {"uri": uri},
                                                       "position": {"line": use, "character": col},
                                                       "context": {"includeDeclaration": True}})
    assert sorted(r["range"]["start"]["line"] for r in found) == [declared, use]


def test_formatting_formats_and_refuses_a_file_that_does_not_parse(client, tmp_path):
    uri = _open(client, tmp_path / "p.policy", "plugin p\non job_ready(job)=job.min_available>0\n")
    (edit,) = client.request("textDocument/formatting", {"textDocument": {"uri": uri},
                                                          "options": {"tabSize": 4, "insertSpaces": True}})
    assert edit["newText"] == "plugin p\n\non job_ready(job) = job.min_available > 0\n"
    broken = _open(client, tmp_path / "q.policy", "plugin q\non job_ready(job) = (\n")
    assert client.request("textDocument/formatting", {"textDocument": {"uri": broken},
                                                      "options": {"tabSize": 4, "insertSpaces": True}}) is None
    message = client.wait_for("window/showMessage")
    assert message["type"] == 1 and "does not parse" in message["message"]


def test_a_half_typed_file_never_crashes_the_server(client, tmp_path):
    uri = _open(client, tmp_path / "p.policy", "plugin p\n\non reclaimable(r, cs):\n    victim when (((\n")
    _diagnostics(client, uri)
    for line in range(4):
        for char in (0, 5, 14, 30):
            position = {"textDocument": {"uri": uri}, "position": {"line": line, "character": char}}
            client.request("textDocument/completion", position)
            client.request("textDocument/hover", position)
            client.request("textDocument/definition", position)


def test_bundle_yaml_completes_plugin_names_and_a_plugins_argument_keys(client, bundle):
    manifest = bundle / "bundle.yaml"
    text = "tiers:\n- plugins:\n  - name: min\n  - {name: min_runtime, arguments: {min\n"
    uri = _open(client, manifest, text, "yaml")
    plugins = client.request("textDocument/completion", {"textDocument": {"uri": uri},
                                                         "position": {"line": 2, "character": 13}})
    assert {"min_runtime", "gang", "proportion"} <= {i["label"] for i in plugins["items"]}
    keys = client.request("textDocument/completion", {"textDocument": {"uri": uri},
                                                      "position": {"line": 3, "character": 40}})
    assert [i["label"] for i in keys["items"]] == ["minRuntime"]


def _responses(client: LspClient, idents: set[int], timeout: float = 120) -> list[int]:
    """The ids of these requests' responses, in the order they arrived."""
    import time
    order: list[int] = []
    deadline = time.monotonic() + timeout
    while len(order) < len(idents):
        message = client._next(deadline)
        if message.get("id") in idents and "method" not in message:
            order.append(message["id"])
    return order


def test_a_slow_document_holds_up_no_other_request(client, tmp_path):
    """Checking is never done on the server's main thread: while completion on a large document
    is still checking it, a hover on another document is answered."""
    small = _open(client, tmp_path / "p.policy", "plugin p\n\non reclaimable(r, cs):\n    abstain\n")
    hover = {"textDocument": {"uri": small}, "position": {"line": 2, "character": 5}}
    assert client.request("textDocument/hover", hover)  # warm: the standard library is checked once
    lines = "".join(f"    let v{i} = task.priority + {i} * 2 - (3 + {i})\n" for i in range(6000))
    big = _open(client, tmp_path / "big.policy", "plugin big\n\non allocate(task):\n" + lines + "    let x = task.\n")
    client.send({"jsonrpc": "2.0", "id": 9001, "method": "textDocument/completion",
                 "params": {"textDocument": {"uri": big}, "position": {"line": 6003, "character": 17}}})
    client.send({"jsonrpc": "2.0", "id": 9002, "method": "textDocument/hover", "params": hover})
    assert _responses(client, {9001, 9002}) == [9002, 9001]


def test_a_newer_edit_cancels_the_running_check(client, tmp_path):
    """An edit while a long check runs: the check of the older text stops and publishes nothing;
    the newer text's diagnostics come instead, well before the older check would have ended."""
    path = tmp_path / "slow.policy"
    lines = "".join(f"    let v{i} = task.priority + {i} * 2 - (3 + {i})\n" for i in range(6000))
    path.write_text("plugin slow\n")
    uri = _open(client, path, "plugin slow\n\non allocate(task):\n" + lines + "    let bad = task.nope\n")
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
        {"text": "plugin slow\n\non allocate(task):\n    let bad = task.nada\n"}]})
    published = client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri, timeout=120)
    assert [(d["code"], d["range"]["start"]["line"]) for d in published["diagnostics"]
            if d["severity"] == 1] == [("E101", 3)]
    assert "nada" in published["diagnostics"][0]["message"]


@pytest.mark.parametrize("params", [None, "file.policy", {"textDocument": 5}, []])
def test_a_request_with_params_of_the_wrong_shape_gets_an_error_answer(client, tmp_path, params):
    with pytest.raises(RuntimeError) as refused:
        client.request("textDocument/hover", params, timeout=20)
    error = refused.value.args[0]
    assert error["code"] == -32602 and "params of 'textDocument/hover' do not have its shape" in error["message"]
    # the server reads on: the next request is answered
    policy = tmp_path / "p.policy"
    policy.write_text("plugin p\n")
    client.notify("textDocument/didOpen", {"textDocument": {"uri": policy.as_uri(), "languageId": "fumarole",
                                                             "version": 1, "text": "plugin p\n"}})
    assert client.request("textDocument/hover", {"textDocument": {"uri": policy.as_uri()},
                                                 "position": {"line": 0, "character": 0}}) is None


SITE = """plugin guard

# Tasks younger than this are never victims.
arg min_runtime: duration = 10m from "minRuntime"


on reclaim_candidate(reclaimer, task):
    let age = now - task.start_time
    return old_enough(age)


# Whether a task of this age may go.
def old_enough(age: float) -> bool = age >= min_runtime
"""


def _hover(client: LspClient, uri: str, line: int, character: int) -> str:
    result = client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                   "position": {"line": line, "character": character}})
    return result["contents"]["value"] if result else ""


@pytest.mark.parametrize("line, character, expected", [
    (12, 46, '`arg min_runtime: duration = 10m from "minRuntime"`\n\nTasks younger than this are never victims.'),
    (8, 13, "`def old_enough(age: float) -> bool`\n\nWhether a task of this age may go."),
    (12, 20, "**type** `float`\n\na number with a fraction; times (seconds since the epoch) and durations are floats"),
    (7, 9, "`age: float`"),
    (8, 24, "`age: float`"),
    (6, 32, "`task: Task`"),
])
def test_hover_names_every_kind_of_name(client, tmp_path, line, character, expected):
    uri = _open(client, tmp_path / "guard.policy", SITE)
    assert _hover(client, uri, line, character) == expected


def test_hover_on_a_schema_type_lists_its_attributes(client, tmp_path):
    uri = _open(client, tmp_path / "p.policy", "plugin p\n\ndef f(q: Queue) -> bool = q.reclaimable\n")
    text = _hover(client, uri, 2, 10)
    assert text.startswith("**type** `Queue`") and "attributes: " in text and "deserved" in text


def test_completion_on_a_bare_identifier_offers_locals_arguments_definitions_and_the_stdlib(client, tmp_path):
    text = SITE.replace("    return old_enough(age)", "    return old_enough(ag")
    uri = _open(client, tmp_path / "guard.policy", text)
    items = client.request("textDocument/completion", {"textDocument": {"uri": uri},
                                                       "position": {"line": 8, "character": 25}})["items"]
    assert [i["label"] for i in items] == ["age"]
    everything = client.request("textDocument/completion", {"textDocument": {"uri": uri},
                                                            "position": {"line": 8, "character": 11}})["items"]
    labels = {i["label"]: i for i in everything}
    assert {"age", "reclaimer", "task", "min_runtime", "old_enough", "now", "len", "Task"} <= set(labels)
    assert labels["old_enough"]["detail"] == "def old_enough(age: float) -> bool"
    assert labels["min_runtime"]["detail"] == 'arg min_runtime: duration = 10m from "minRuntime"'
