"""The VS Code extension folder: a manifest that points at files that exist, and a TextMate grammar
that highlights every keyword of the language's grammar."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VSCODE = ROOT / "editors" / "vscode"


def test_manifest_names_files_that_exist_and_starts_fumarole_lsp():
    manifest = json.loads((VSCODE / "package.json").read_text())
    contributes = manifest["contributes"]
    assert (VSCODE / manifest["main"]).is_file()
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
