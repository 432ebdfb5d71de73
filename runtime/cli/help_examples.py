"""Examples for every command's ``--help``, and the finishing touches every parser gets.

The examples are data, one list per command, so a test can parse each of them with the real
parser: an example that no longer matches the grammar fails the suite instead of misleading a
reader.  :func:`finish` gives every (sub)command a description (its one-line help where it has
none), its examples as the epilog, and lists subcommands in alphabetical order.
"""

from __future__ import annotations

import argparse
from typing import Iterator

EXAMPLES: dict[str, list[str]] = {
    "": ["fumarole run examples/cluster.yaml", "fumarole check policies/ --strict", "fumarole COMMAND --help"],
    "run": ["fumarole run examples/cluster.yaml",
            "fumarole run cluster.yaml --config volcano-scheduler.conf -o json",
            "fumarole run cluster.yaml --bundle examples/site-min-runtime --explain --now 2026-11-23T18:00:00Z",
            "fumarole run --context prod"],
    "snapshot": ["fumarole snapshot -o cluster.yaml", "fumarole snapshot --kubeconfig admin.conf --context prod -o cluster.yaml"],
    "lsp": ["fumarole lsp --stdio"],
    "completion": ["source <(fumarole completion bash)", "fumarole completion fish > ~/.config/fish/completions/fumarole.fish"],
    "version": ["fumarole version -o json"],
    "test": ["fumarole test examples/site-min-runtime/tests",
             "fumarole test tests/ --coverage --threshold 80 -o junit",
             "fumarole test tests/ --session-timeout 10"],
    "bundle": ["fumarole bundle build examples/site-min-runtime --out site.tar.gz",
               "fumarole bundle inspect site.tar.gz -o yaml"],
    "bundle build": ["fumarole bundle build examples/site-min-runtime --out site.tar.gz"],
    "bundle sign": ["fumarole bundle sign site.tar.gz --key key.pem"],
    "bundle verify": ["fumarole bundle verify site.tar.gz --trusted-key key.pub"],
    "bundle inspect": ["fumarole bundle inspect site.tar.gz -o json"],
    "serve": ["fumarole serve --bundle examples/site-min-runtime",
              "fumarole serve --state-dir /var/lib/fumarole --listen 0.0.0.0:8080 --admin-token-file token"],
    "check": ["fumarole check examples/site-min-runtime", "fumarole check policies/ --strict -o github"],
    "fmt": ["fumarole fmt policies/", "fumarole fmt --check policies/", "cat a.policy | fumarole fmt -",
            "fumarole fmt --check policies/ -o json"],
    "schema": ["fumarole schema > bundle.schema.json", "fumarole schema hooks"],
    "replay": ["fumarole replay examples/traces/two-queues.yaml --out out/",
               "fumarole replay examples/traces/ping-pong.yaml --compare examples/site-min-runtime --out out/",
               "fumarole replay examples/traces/two-queues.yaml --out out/ -o json"],
    "sweep": ["fumarole sweep examples/sweeps/min-runtime.yaml --out sweep/ --workers 2",
              "fumarole sweep examples/sweeps/min-runtime.yaml --out sweep/ --session-timeout 30 -o yaml"],
    "trace": ["fumarole trace synth burst --nodes 20 --out trace.yaml",
              "fumarole trace cut cluster.yaml --run-time exp:30m --out trace.yaml"],
    "trace synth": ["fumarole trace synth burst --nodes 20 --seed 7 --out trace.yaml"],
    "trace cut": ["fumarole trace cut cluster.yaml --run-time uniform:10m,2h --out trace.yaml"],
    "diff": ["fumarole diff cluster.yaml --base volcano-scheduler.conf --candidate examples/site-min-runtime",
             "fumarole diff cluster.yaml --base a/ --candidate b/ -o json --fail-on-change"],
}


def commands(parser: argparse.ArgumentParser, path: str = "") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every (sub)command's name ("" for the top) and parser, depth first."""
    yield path, parser
    for action in parser._actions:  # noqa: SLF001 - argparse keeps its actions there
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for name, child in action.choices.items():
                yield from commands(child, f"{path} {name}".strip())


def finish(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    for name, command in commands(parser):
        command.formatter_class = argparse.RawDescriptionHelpFormatter
        command.epilog = "examples:\n" + "\n".join(f"  {line}" for line in EXAMPLES[name])
        for action in command._actions:  # noqa: SLF001
            if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
                action._choices_actions.sort(key=lambda choice: choice.dest)  # noqa: SLF001 - the listed order
                action.choices = dict(sorted(action.choices.items()))  # and the order errors name them in
                for choice in action._choices_actions:  # noqa: SLF001
                    child = action.choices[choice.dest]
                    child.description = child.description or choice.help
    return parser
