"""Options every command spells the same way.

Output is chosen with ``-o/--output`` (kubectl's habit; ``--format`` is kept as
a synonym).  The format for people is called ``text`` by the authoring
commands and ``table`` by ``run``; each command accepts either name for it,
so a user never has to remember which.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import math
from typing import Sequence

from fumarole.policy_lang import file_errors
from fumarole.policy_lang.diagnostics import FumaroleError

HUMAN = ("text", "table")


def add_output_option(parser: argparse.ArgumentParser, formats: Sequence[str]) -> None:
    """``-o/--output FORMAT``; the first format is the default and the one for people."""
    human = formats[0]

    def output_format(value: str) -> str:
        if value in HUMAN and human in HUMAN:
            return human
        if value not in formats:
            raise argparse.ArgumentTypeError(f"invalid choice: {value!r} (choose from {', '.join(formats)})")
        return value

    action = parser.add_argument("-o", "--output", "--format", dest="format", type=output_format, default=human,
                                 metavar="FORMAT", help=f"{' | '.join(formats)} (default {human})")
    # read by fumarole completion; an attribute of ours on argparse's Action, which declares none
    action.completion_choices = tuple(formats)  # type: ignore[attr-defined]


def session_time(value: str) -> float:
    """``--now``: an RFC 3339 time such as 2026-11-23T18:00:00Z, as seconds since the epoch."""
    text = value.strip()
    try:
        stamp = _dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not an RFC 3339 time: {value!r} (write e.g. 2026-11-23T18:00:00Z)") from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=_dt.timezone.utc)
    return stamp.timestamp()


def session_timeout(value: str) -> float:
    """``--session-timeout`` (``run``, ``serve``): a positive number of seconds."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {value!r}")
    return seconds


def positive_int(value: str) -> int:
    """A whole number above zero (``serve --session-memory``)."""
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive whole number, not {value!r}")
    return number


def usage_error(message: str, hint: str | None = None) -> FumaroleError:
    """F002: the command line asks for something that cannot be done (no position: it is an argument)."""
    return FumaroleError([file_errors.bad_argument(message, hint)])
