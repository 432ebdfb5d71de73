"""Volcano's scheduler options as ``fumarole run`` / ``fumarole serve`` flags, spelled as vc-scheduler spells them.

The flags are parsed with pflag's rules (``ingest.scheduler_options``); a bad
value or an unknown flag is a diagnostic at its column of the command line,
like any other input fumarole reads.
"""

from __future__ import annotations

import argparse
from typing import Any, Sequence

from fumarole.policy_lang.diagnostics import Diagnostic, FumaroleError, Span
from fumarole.runtime.cli.grammar import COMMAND_LINE, column, command_line
from fumarole.runtime.ingest import config_errors
from fumarole.runtime.ingest.scheduler_options import OPTIONS, OptionError, flag_value, unknown_option

OPTION_COMMANDS = ("run", "serve")


def add_scheduler_option_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("Volcano scheduler options (override the bundle's schedulerOptions)")
    for option in OPTIONS.values():
        extra: dict[str, Any] = {"nargs": "?", "const": "true"} if option.kind == "bool" else {}
        group.add_argument(f"--{option.flag}", dest=f"option_{option.field}", action="append",
                           metavar="VALUE", help=option.doc, **extra)


def _flag_index(argv: Sequence[str], flag: str) -> int:
    """The last occurrence of ``--flag`` (the value pflag keeps), or 0 when it cannot be found."""
    spelled = f"--{flag}"
    found = [i for i, token in enumerate(argv) if token == spelled or token.startswith(spelled + "=")]
    return found[-1] if found else 0


def _error(diags: list[Diagnostic], argv: Sequence[str]) -> FumaroleError:
    return FumaroleError(diags, {COMMAND_LINE: command_line(argv)})


def options_from_args(args: argparse.Namespace, argv: Sequence[str]) -> dict[str, Any]:
    """The scheduler-option flags given, as field overrides; FumaroleError (O002) for a bad value."""
    overrides: dict[str, Any] = {}
    diags = []
    for option in OPTIONS.values():
        texts = getattr(args, f"option_{option.field}", None)
        if not texts:
            continue
        try:
            overrides[option.field] = flag_value(option, texts)
        except OptionError as exc:
            where = Span(1, column(argv, _flag_index(argv, option.flag)))
            diags.append(config_errors.bad_option_value(COMMAND_LINE, where, str(exc)))
    if diags:
        raise _error(diags, argv)
    return overrides


def long_flags(parser: argparse.ArgumentParser) -> list[str]:
    """Every ``--name`` a command takes, without the dashes (the did-you-mean candidates)."""
    return [s[2:] for action in parser._actions for s in action.option_strings if s.startswith("--")]


def unknown_flags_error(extras: Sequence[str], argv: Sequence[str], known: Sequence[str]) -> FumaroleError | None:
    """O001 / O003 for the flags argparse did not know, with a did-you-mean; None when extras are not flags."""
    diags = []
    for token in extras:
        if not token.startswith("--"):
            continue
        name = token[2:].split("=", 1)[0]
        where = (1, column(argv, list(argv).index(token)))
        diags.append(unknown_option(name, COMMAND_LINE, where, prefix="--", candidates=known))
    return _error(diags, argv) if diags else None


__all__ = ["add_scheduler_option_flags", "options_from_args", "unknown_flags_error", "long_flags", "OPTION_COMMANDS"]
