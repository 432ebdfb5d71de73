"""Shell completion scripts: generated from the parser, and they complete what the parser accepts."""

from __future__ import annotations

import shutil
import subprocess

import pytest


def _complete(script: str, words: list[str]) -> list[str]:
    """What the bash function offers with the cursor after ``words`` (the last one being typed)."""
    line = " ".join(words)
    program = (f"{script}\nCOMP_WORDS=({line}); COMP_CWORD={len(words) - 1}\n"
               "_fumarole\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n")
    done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, check=True)
    return done.stdout.split()


@pytest.fixture(scope="module")
def bash_script() -> str:
    if not shutil.which("bash"):
        pytest.skip("bash is not installed")
    from fumarole.runtime.cli.completion import bash
    from fumarole.runtime.cli.main import build_parser

    return bash(build_parser())


def test_bash_completes_commands_options_and_choices(bash_script):
    assert {"run", "check", "test", "bundle", "serve", "version", "completion"} <= set(
        _complete(bash_script, ["fumarole", "''"]))
    assert _complete(bash_script, ["fumarole", "bundle", "b"]) == ["build"]
    assert "--bundle" in _complete(bash_script, ["fumarole", "run", "--b"])
    assert _complete(bash_script, ["fumarole", "run", "-o", "''"]) == ["table", "json", "yaml"]
    assert _complete(bash_script, ["fumarole", "check", "--output", "s"]) == ["sarif"]
    assert _complete(bash_script, ["fumarole", "schema", "h"]) == ["hooks"]


def test_every_shell_gets_a_script(cli):
    bash_out, zsh_out, fish_out = (cli("completion", shell).out for shell in ("bash", "zsh", "fish"))
    assert "complete -o filenames -F _fumarole fumarole" in bash_out
    assert zsh_out.startswith("#compdef fumarole") and "_fumarole()" in zsh_out
    assert "complete -c fumarole -n '__fish_seen_subcommand_from run' -s o -x -a 'table json yaml'" in fish_out
    assert cli("completion", "tcsh").code == 2
