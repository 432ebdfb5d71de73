"""One grammar for every command line: the same errors, positions and did-you-mean everywhere.

argparse reports a bad command line as a usage line and a bare message, and suggests nothing.
fumarole reports it like any other bad input: F002 at its column of the command line as the user
typed it, with a did-you-mean for a misspelt command, option or choice, or else the usage of the
command concerned.  Every parser of the ``fumarole`` command is a :class:`FumaroleParser`
(``add_subparsers`` hands its class down), and each records itself as the command that parsed,
so an unknown option is checked against the options of that very command.
"""

from __future__ import annotations

import argparse
import re
from typing import Any, NoReturn, Sequence

from fumarole.policy_lang import file_errors
from fumarole.policy_lang.diagnostics import FumaroleError, did_you_mean, printable

COMMAND_LINE = "command line"


class CommandLineError(Exception):
    """What argparse found wrong with the command line, and the (sub)command whose parser found it."""

    def __init__(self, message: str, parser: argparse.ArgumentParser) -> None:
        super().__init__(message)
        self.message, self.parser = message, parser


class FumaroleParser(argparse.ArgumentParser):
    """An ArgumentParser that raises :class:`CommandLineError` instead of printing and exiting, and
    leaves ``command_parser`` (the innermost command's parser) in the namespace."""

    def error(self, message: str) -> NoReturn:
        raise CommandLineError(message, self)

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if getattr(parsed, "command_parser", None) is None:  # an inner command's parser came first
            parsed.command_parser = self
        return parsed, extras


def command_line(argv: Sequence[str]) -> str:
    """The command line as the user typed it (near enough: arguments joined by spaces; bytes that are
    not UTF-8 as \\xNN, so that the caret lines up under what the terminal shows)."""
    return " ".join(["fumarole", *map(printable, argv)])


def column(argv: Sequence[str], index: int) -> int:
    """1-based column of ``argv[index]`` in :func:`command_line`."""
    return len(command_line(argv[:index])) + 2


def options_of(parser: argparse.ArgumentParser) -> list[str]:
    return [s for action in parser._actions for s in action.option_strings]  # noqa: SLF001 - argparse's own list


def usage_of(parser: argparse.ArgumentParser) -> str:
    """The command's usage when it reads at a glance, else where to read it."""
    usage = " ".join(parser.format_usage().split())
    return usage if len(usage) <= 100 else f"see '{parser.prog} --help'"


def _choices(message: str) -> list[str]:
    found = re.search(r"\(choose from (.*)\)", message)
    return [c.strip(" '") for c in found.group(1).split(",")] if found else []


def _error(argv: Sequence[str], message: str, at: int | None, hint: str | None) -> FumaroleError:
    col = column(argv, at) if at is not None else len(command_line(argv)) + 1
    return FumaroleError([file_errors.bad_command_line(COMMAND_LINE, col, message, hint)],
                         {COMMAND_LINE: command_line(argv)})


def _index(argv: Sequence[str], token: str) -> int | None:
    """Where ``token`` (or ``--opt=token``) stands in argv, the first time."""
    for i, given in enumerate(argv):
        if given == token or given.endswith("=" + token) or _quoted(given) in (token, "=" + token):
            return i
    return None


def _quoted(given: str) -> str:
    """How argparse's messages and ``{value!r}`` write an argument between quotes."""
    return repr(given)[1:-1]


def parse_error(error: CommandLineError, argv: Sequence[str]) -> FumaroleError:
    """F002 for what argparse refused, at the offending argument, with a did-you-mean or the usage.

    argparse reports missing required arguments before it looks at the ones it does not know, but
    a misspelt option is usually why a required one seems missing (``--outt DIR`` for ``--out``),
    so an unknown option is reported first, with its did-you-mean."""
    if error.message.startswith("the following arguments are required"):
        unknown = _unknown_options(argv, error.parser)
        if unknown:
            return unknown_arguments_error(unknown, argv, error.parser)
    named = re.findall(r"'([^']*)'", error.message) + re.findall(r"option: (\S+)", error.message)
    at = next((i for i in map(lambda token: _index(argv, token), named) if i is not None), None)
    bad = re.search(r"invalid choice: '([^']*)'", error.message)
    hint = did_you_mean(bad.group(1), _choices(error.message)) if bad else None
    message = error.message
    for given in argv:  # show an argument that is not UTF-8 as the command line shows it
        if printable(given) != given:
            message = message.replace(_quoted(given), printable(given))
    return _error(argv, message, at, hint or usage_of(error.parser))


def _unknown_options(argv: Sequence[str], parser: argparse.ArgumentParser) -> list[str]:
    """The arguments after the command's own name that look like options it does not take."""
    words = parser.prog.split()[1:]
    start = next((i + len(words) for i in range(len(argv) - len(words) + 1)
                  if list(argv[i:i + len(words)]) == words), 0)
    known = set(options_of(parser))
    return [token for token in argv[start:]
            if re.match(r"--?[A-Za-z]", token) and token.split("=", 1)[0] not in known]


def unknown_arguments_error(extras: Sequence[str], argv: Sequence[str], parser: argparse.ArgumentParser) -> FumaroleError:
    """F002 for each argument the command does not take: options get a did-you-mean among its own."""
    diagnostics = []
    for token in extras:
        at = _index(argv, token)
        if token.startswith("-") and len(token) > 1:
            name = token.split("=", 1)[0]
            message = f"'{parser.prog}' has no option {name}"
            hint = did_you_mean(name, options_of(parser))
        else:
            message = f"'{parser.prog}' takes no further argument {token!r}"
            hint = None
        diagnostics += _error(argv, message, at, hint or usage_of(parser)).diagnostics
    return FumaroleError(diagnostics, {COMMAND_LINE: command_line(argv)})
