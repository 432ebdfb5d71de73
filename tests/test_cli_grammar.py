"""One grammar for every command: positioned F002 errors with did-you-mean, examples in every --help
that the parser accepts, help on every argument, and -o where a command prints a document."""

from __future__ import annotations

import json
import re
import shlex

import pytest
import yaml

from fumarole.runtime.cli.help_examples import EXAMPLES, commands
from fumarole.runtime.cli.main import build_parser


def test_a_misspelt_command_is_positioned_with_a_did_you_mean(cli):
    result = cli("chek", "x")
    assert result.code == 2 and result.out == ""
    assert result.err.splitlines()[0] == ("command line:1:10: error[F002]: argument COMMAND: invalid choice: 'chek' "
                                          "(choose from 'bundle', 'check', 'completion', 'diff', 'fmt', 'lsp', "
                                          "'replay', 'run', 'schema', 'serve', 'snapshot', 'sweep', 'test', "
                                          "'trace', 'version')")
    assert "  hint: did you mean 'check'?" in result.err.splitlines()
    nested = cli("bundle", "verfy", "x.tar.gz")
    assert nested.code == 2 and nested.err.startswith("command line:1:17: error[F002]: argument ACTION: invalid")
    assert "  hint: did you mean 'verify'?" in nested.err


def _col(argv: list[str], token: str) -> int:
    return len(" ".join(["fumarole", *argv[:argv.index(token)]])) + 2


@pytest.mark.parametrize("argv, bad, message, hint", [
    (["check", "--strcit", "x"], "--strcit", "'fumarole check' has no option --strcit", "did you mean '--strict'?"),
    (["test", "x", "--covrage"], "--covrage", "'fumarole test' has no option --covrage", "did you mean '--coverage'?"),
    (["fmt", "x", "--chek"], "--chek", "'fumarole fmt' has no option --chek", "did you mean '--check'?"),
    (["replay", "t.yaml", "--out", "o", "--perod", "1s"], "--perod", "'fumarole replay' has no option --perod",
     "did you mean '--period'?"),
    (["bundle", "inspect", "a.tar.gz", "--outptu", "json"], "--outptu",
     "'fumarole bundle inspect' has no option --outptu", "did you mean '--output'?"),
    # a misspelt required option is reported as such, not as the required one missing
    (["replay", "t.yaml", "--outt", "o"], "--outt", "'fumarole replay' has no option --outt", "did you mean '--out'?"),
    (["bundle", "verify", "--keyy", "k.pem"], "--keyy", "'fumarole bundle verify' has no option --keyy",
     "did you mean '--key'?"),
])
def test_an_unknown_option_of_any_command_gets_its_column_and_a_did_you_mean(cli, argv, bad, message, hint):
    col = _col(argv, bad)
    result = cli(*argv)
    assert result.code == 2
    lines = result.err.splitlines()
    assert lines[0] == f"command line:1:{col}: error[F002]: {message}"
    assert lines[1] == "   1 | fumarole " + " ".join(argv)
    assert lines[2].index("^") == len("   1 | ") + col - 1
    assert lines[3] == f"  hint: {hint}"


def test_a_bad_choice_and_a_missing_argument_name_the_place_and_the_usage(cli):
    choice = cli("check", "x", "--fail-on", "warnin")
    assert choice.code == 2 and choice.err.splitlines()[0].startswith(
        "command line:1:28: error[F002]: argument --fail-on: invalid choice: 'warnin'")
    assert "  hint: did you mean 'warning'?" in choice.err
    missing = cli("check")
    assert missing.code == 2
    assert missing.err.splitlines()[0] == "command line:1:15: error[F002]: the following arguments are required: PATH"
    assert missing.err.splitlines()[-1].startswith("  hint: usage: fumarole check [-h]")


def _example_argv(line: str) -> list[str] | None:
    found = re.search(r"fumarole ([^|>)]*)", line)
    return None if found is None or "--help" in line else shlex.split(found.group(1))


def test_every_command_has_examples_in_its_help_and_each_one_parses():
    parser = build_parser()
    names = [name for name, _ in commands(parser)]
    assert sorted(names) == sorted(EXAMPLES)
    for name, command in commands(parser):
        assert "examples:\n  " in command.format_help(), name
        assert command.description, f"'fumarole {name}' has no description"
    for name, lines in EXAMPLES.items():
        for line in lines:
            argv = _example_argv(line)
            if argv is None:
                continue
            args, extras = build_parser().parse_known_args(argv)
            assert extras == [], line
            assert args.command_parser.prog == f"fumarole {name}".strip() or name in ("", "bundle", "trace"), line


def test_every_argument_of_every_command_says_what_it_is():
    for name, command in commands(build_parser()):
        silent = [a.dest for a in command._actions if not a.help and a.dest != "command"]
        assert silent == [], f"'fumarole {name}': {silent}"


def test_commands_are_listed_in_alphabetical_order():
    listed = re.findall(r"^    ([a-z]+)", build_parser().format_help(), re.MULTILINE)
    assert listed == sorted(listed) and "run" in listed and "version" in listed


def test_yaml_output_wherever_a_document_is_printed(cli, root):
    policy = str(root / "examples" / "site-min-runtime")
    assert yaml.safe_load(cli("check", policy, "-o", "yaml").out) == json.loads(cli("check", policy, "-o", "json").out)
    tests = str(root / "examples" / "site-min-runtime" / "tests")
    as_yaml, as_json = cli("test", tests, "-o", "yaml"), cli("test", tests, "-o", "json")
    assert as_yaml.code == as_json.code == 0
    timeless = [{**case, "seconds": None} for case in yaml.safe_load(as_yaml.out)["cases"]]
    assert timeless == [{**case, "seconds": None} for case in json.loads(as_json.out)["cases"]]


def test_bundle_verify_takes_trusted_key_as_run_and_serve_do(cli, root, tmp_path):
    archive = tmp_path / "site.tar.gz"
    assert cli("bundle", "build", str(root / "examples" / "site-min-runtime"), "--out", str(archive)).code == 0
    inspected = cli("bundle", "inspect", str(archive), "-o", "yaml")
    assert inspected.code == 0 and yaml.safe_load(inspected.out) == json.loads(
        cli("bundle", "inspect", str(archive), "-o", "json").out)
    unsigned = cli("bundle", "verify", str(archive), "--trusted-key", str(root / "README.md"))
    assert unsigned.code == 2 and "error[" in unsigned.err and "Traceback" not in unsigned.err


def test_docs_cli_synopsis_names_every_command_and_only_real_options(root):
    """docs/cli.md's synopsis against the parser: every command appears, and every option it spells
    is one that command takes."""
    synopsis = (root / "docs" / "cli.md").read_text().split("```")[1]
    parsers = dict(commands(build_parser()))
    for name in parsers:
        if name:
            assert f"fumarole {name.split()[0]} " in synopsis or f"fumarole {name.split()[0]}\n" in synopsis, name
    for line in synopsis.strip().splitlines():
        words = line.split()
        command = parsers[words[1]]
        nested = [dict(commands(command)).get(w) for w in words[2:] if w in dict(commands(command))]
        known = {o for p in [command, *[n for n in nested if n]] for _, c in commands(p) for o in
                 [s for a in c._actions for s in a.option_strings]}
        spelled = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", line.split("(")[0]))
        assert spelled - known - {"--version"} == set(), line


def test_arguments_that_are_not_utf8_are_shown_as_bytes_with_the_caret_under_them(cli):
    bad_time = cli("run", "--now", "2026\udcff", "x.yaml")  # b"2026\xff" as the OS hands it to Python
    assert bad_time.code == 2
    assert bad_time.err.splitlines()[:3] == [
        "command line:1:20: error[F002]: argument --now: not an RFC 3339 time: '2026\\xff' "
        "(write e.g. 2026-11-23T18:00:00Z)",
        "   1 | fumarole run --now 2026\\xff x.yaml",
        "                          ^"]
    missing = cli("run", "ab\udcffcd.yaml")
    assert missing.code == 2
    assert missing.err.splitlines()[0] == "ab\\xffcd.yaml: error[F001]: cannot read ab\\xffcd.yaml: No such file or directory"
