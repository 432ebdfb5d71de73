"""The VS Code extension folder: a manifest that points at files that exist, and a TextMate grammar
that highlights every keyword of the language's grammar."""

from __future__ import annotations

import json
import os
import zipfile
import shutil
import subprocess
import sys
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VSCODE = ROOT / "editors" / "vscode"


def test_manifest_names_files_that_exist_and_starts_fumarole_lsp():
    manifest = json.loads((VSCODE / "package.json").read_text())
    contributes = manifest["contributes"]
    # The package runs the bundle of extension.js that `npm run bundle` makes (vsce runs it first).
    assert manifest["main"] == "./dist/extension.js"
    assert manifest["scripts"]["vscode:prepublish"] == "npm run bundle"
    assert "esbuild extension.js --bundle" in manifest["scripts"]["bundle"]
    assert "--outfile=dist/extension.js" in manifest["scripts"]["bundle"]
    assert (VSCODE / "extension.js").is_file()
    assert (VSCODE / contributes["languages"][0]["configuration"]).is_file()
    assert (VSCODE / contributes["grammars"][0]["path"]).is_file()
    assert contributes["languages"][0]["extensions"] == [".policy"]
    assert 'args: ["lsp"]' in (VSCODE / "extension.js").read_text()
    json.loads((VSCODE / "language-configuration.json").read_text())


def test_the_textmate_grammar_highlights_every_keyword_of_the_language():
    grammar = json.loads((VSCODE / "syntaxes" / "fumarole-policy.tmLanguage.json").read_text())
    patterns = json.dumps(grammar["repository"])
    lark = (ROOT / "policy_lang" / "grammar.lark").read_text()
    keywords = {k for k in re.findall(r'"([a-z]+)"', lark)}
    highlighted = {k for k in keywords if re.search(rf"\b{k}\b", patterns)}
    assert keywords - highlighted == set()
    for pattern in _regexes(grammar["repository"]):
        re.compile(pattern)  # every pattern is a valid regular expression


def _regexes(node) -> list[str]:
    if isinstance(node, dict):
        found = [v for k, v in node.items() if k in ("match", "begin", "end")]
        return found + [r for v in node.values() for r in _regexes(v)]
    if isinstance(node, list):
        return [r for v in node for r in _regexes(v)]
    return []


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js to load the extension")
def test_the_extension_starts_the_server_as_vscode_languageclient_launches_it():
    """extension.js is loaded under Node with stand-ins for the editor API, and its server is started
    the way vscode-languageclient starts a stdio server (args, then ``--stdio``): the server answers
    initialize with its capabilities and shuts down cleanly."""
    fumarole = shutil.which("fumarole", path=str(Path(sys.executable).parent)) or shutil.which("fumarole")
    assert fumarole, "the fumarole command is installed beside the test's Python"
    done = subprocess.run(["node", str(ROOT / "tests" / "editors" / "launch_extension.js"),
                           str(VSCODE / "extension.js"), fumarole],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["argv"] == ["lsp", "--stdio"]
    assert report["code"] == 0, report["stderr"]
    capabilities = report["initialize"]["result"]["capabilities"]
    assert capabilities["hoverProvider"] and capabilities["completionProvider"]
    assert report["initialize"]["result"]["serverInfo"]["name"] == "fumarole"
    assert report["shutdown"] == {"jsonrpc": "2.0", "id": 2, "result": None}
    assert {"scheme": "file", "language": "fumarole-policy"} in report["selector"]


def test_the_extension_package_is_complete():
    """What `vsce package` asks of a publishable extension: a licence file, and a .vscodeignore that
    keeps the sources, the dependencies (bundled into dist/extension.js), tests and maps out."""
    manifest = json.loads((VSCODE / "package.json").read_text())
    assert manifest["license"] == "Apache-2.0"
    assert (VSCODE / "LICENSE").read_text().startswith("\n                                 Apache License")
    ignored = (VSCODE / ".vscodeignore").read_text().split()
    assert "**/*.map" in ignored and "node_modules/**" in ignored and "extension.js" in ignored
    assert "dist/**" not in ignored and "dist/" not in ignored


VSCE = VSCODE / "node_modules" / ".bin" / "vsce"
PACKAGED = {
    "[Content_Types].xml", "extension.vsixmanifest", "extension/LICENSE.txt", "extension/readme.md",
    "extension/package.json", "extension/language-configuration.json", "extension/dist/extension.js",
    "extension/syntaxes/fumarole-policy.tmLanguage.json",
}


def test_the_packaged_extension_starts_its_server(tmp_path):
    """`npm run package` (vsce) builds the .vsix with no warning and exactly the files a user
    needs; the extension taken out of that .vsix, with the real vscode-languageclient bundled in
    it, starts `fumarole lsp --stdio`, gets the server's capabilities and shuts it down.  Only the
    editor API is a stand-in.  CI installs the build tools (`npm ci`) and sets
    FUMAROLE_REQUIRE_VSCODE_PACKAGE, so there the test cannot be skipped."""
    if not VSCE.exists():
        if os.environ.get("FUMAROLE_REQUIRE_VSCODE_PACKAGE"):
            pytest.fail(f"{VSCE} is missing: run `npm ci` in editors/vscode")
        pytest.skip("the extension's build tools are not installed (npm ci in editors/vscode)")
    vsix = tmp_path / "fumarole.vsix"
    built = subprocess.run(["npm", "run", "package", "--", "--out", str(vsix)], cwd=VSCODE,
                           capture_output=True, text=True, timeout=300)
    output = re.sub(r"\x1b\[[0-9;]*m", "", built.stdout + built.stderr)
    assert built.returncode == 0, output
    assert "WARNING" not in output and "ERROR" not in output, output
    with zipfile.ZipFile(vsix) as package:
        assert set(package.namelist()) == PACKAGED
        package.extract("extension/dist/extension.js", tmp_path)
    fumarole = shutil.which("fumarole", path=str(Path(sys.executable).parent)) or shutil.which("fumarole")
    assert fumarole, "the fumarole command is installed beside the test's Python"
    done = subprocess.run(["node", str(ROOT / "tests" / "editors" / "drive_packaged_extension.js"),
                           str(tmp_path / "extension" / "dist" / "extension.js"), fumarole],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["error"] is None and report["messages"] == [], report
    assert report["argv"] == ["lsp", "--stdio"]
    assert report["started"], report
    initialize, shutdown = report["replies"][0], report["replies"][-1]
    assert initialize["result"]["serverInfo"]["name"] == "fumarole"
    capabilities = initialize["result"]["capabilities"]
    assert capabilities["hoverProvider"] and capabilities["completionProvider"]
    assert shutdown == {"id": shutdown["id"], "jsonrpc": "2.0", "result": None}
    assert shutdown["id"] != initialize["id"]
