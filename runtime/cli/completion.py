"""``fumarole completion bash|zsh|fish``: shell completion generated from the argument parser.

The scripts are data read off the parser itself -- every command path, its
options and the choices of options that have them -- so a new option
completes the day it is added.  zsh uses the bash script through
``bashcompinit``; fish gets its own ``complete`` lines.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field


@dataclass
class _Command:
    path: str                                      # "" for the top level, "bundle build" for a nested one
    help: str = ""
    words: list[str] = field(default_factory=list)  # subcommands and options
    choices: dict[str, list[str]] = field(default_factory=dict)  # option -> its values
    takes_value: set[str] = field(default_factory=set)
    has_subcommands: bool = False


def _commands(parser: argparse.ArgumentParser, path: str = "", help: str = "") -> list[_Command]:
    command = _Command(path, help)
    found = [command]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            command.has_subcommands = True
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                command.words.append(name)
                found += _commands(sub, f"{path} {name}".strip(), helps.get(name, ""))
        elif action.option_strings:
            command.words += action.option_strings
            if action.nargs != 0:
                command.takes_value.update(action.option_strings)
            values = list(action.choices) if action.choices else _declared_choices(action)
            if values:
                for option in action.option_strings:
                    command.choices[option] = values
        elif action.choices:  # a positional with fixed values (schema NAME)
            command.choices[""] = list(action.choices)
    return found


def _declared_choices(action: argparse.Action) -> list[str]:
    """Choices of an option validated by a type function (``-o``: see :mod:`.options`)."""
    return list(getattr(action, "completion_choices", ()))


def bash(parser: argparse.ArgumentParser) -> str:
    commands = _commands(parser)
    paths = [c.path for c in commands if c.path]
    lines = ["# bash completion for fumarole (fumarole completion bash)", "_fumarole() {",
             '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" path="" i next',
             "    for ((i = 1; i < COMP_CWORD; i++)); do",
             '        next="${path:+$path }${COMP_WORDS[i]}"',
             '        case "$next" in',
             "            " + "|".join(f'"{p}"' for p in paths) + ') path="$next" ;;',
             "        esac",
             "    done",
             '    case "$path|$prev" in']
    for c in commands:
        for option, values in c.choices.items():
            if option:
                lines.append(f'        "{c.path}|{option}") COMPREPLY=($(compgen -W "{" ".join(values)}" -- "$cur")); return ;;')
        for option in sorted(c.takes_value - set(c.choices)):
            lines.append(f'        "{c.path}|{option}") COMPREPLY=($(compgen -f -- "$cur")); return ;;')
    lines += ["    esac", '    local words="" files=1', '    case "$path" in']
    for c in commands:
        words = " ".join(c.words + c.choices.get("", []))
        files = " files=0" if c.has_subcommands or "" in c.choices else ""
        lines.append(f'        "{c.path}") words="{words}"{files} ;;')
    lines += ["    esac",
              '    if [[ "$cur" == -* || $files == 0 ]]; then',
              '        COMPREPLY=($(compgen -W "$words" -- "$cur"))',
              "    else",
              '        COMPREPLY=($(compgen -W "$words" -- "$cur") $(compgen -f -- "$cur"))',
              "    fi",
              "}",
              "complete -o filenames -F _fumarole fumarole", ""]
    return "\n".join(lines)


def zsh(parser: argparse.ArgumentParser) -> str:
    return "#compdef fumarole\nautoload -U +X bashcompinit && bashcompinit\n" + bash(parser)


def fish(parser: argparse.ArgumentParser) -> str:
    commands = _commands(parser)
    lines = ["# fish completion for fumarole (fumarole completion fish)", "complete -c fumarole -f"]
    for c in commands:
        parts = c.path.split()
        if parts:
            parent = " ".join(parts[:-1])
            condition = _fish_condition(parent, [k.path.split()[-1] for k in commands
                                                  if k.path.startswith(parent) and len(k.path.split()) == len(parts)])
            lines.append(f"complete -c fumarole -n '{condition}' -a {parts[-1]} -d {_fish_quote(c.help)}")
        condition = _fish_condition(c.path, [k.path.split()[-1] for k in commands
                                             if len(k.path.split()) == len(parts) + 1 and k.path.startswith(c.path)])
        for option in (w for w in c.words if w.startswith("-")):
            flag = f"-l {option[2:]}" if option.startswith("--") else f"-s {option[1:]}"
            values = c.choices.get(option)
            extra = f" -x -a '{' '.join(values)}'" if values else (" -r -F" if option in c.takes_value else "")
            lines.append(f"complete -c fumarole -n '{condition}' {flag}{extra}")
        if "" in c.choices:
            lines.append(f"complete -c fumarole -n '{condition}' -a '{' '.join(c.choices[''])}'")
    return "\n".join(lines) + "\n"


def _fish_condition(path: str, siblings: list[str]) -> str:
    """True when the words typed so far are exactly ``path`` (and no deeper command yet)."""
    if not path:
        return "__fish_use_subcommand"
    seen = " && ".join(f"__fish_seen_subcommand_from {word}" for word in path.split())
    deeper = f" && not __fish_seen_subcommand_from {' '.join(siblings)}" if siblings else ""
    return seen + deeper


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


SHELLS = {"bash": bash, "zsh": zsh, "fish": fish}
