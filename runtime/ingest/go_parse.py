"""Go's text-to-value parsers where Kubernetes objects and Volcano flags use them.

Volcano reads annotations with ``strconv.ParseBool`` and its command line
with pflag (``strconv.ParseInt(s, 0, 32)``); what they accept decides whether
a value counts, so fumarole follows them exactly.
"""

from __future__ import annotations

import re

_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}
_OCTAL = re.compile(r"[+-]?0[0-7_]+")
INT32 = (-2**31, 2**31 - 1)


def parse_go_bool(value: object) -> bool | None:
    """Go's strconv.ParseBool; None when the text is not a boolean."""
    if isinstance(value, bool):
        return value
    text = str(value)
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return None


def parse_go_int32(text: str) -> int | None:
    """strconv.ParseInt(s, 0, 32): decimal, 0x / 0o / 0b prefixes, leading-0 octal, underscores; None if not."""
    try:
        value = int(text, 8) if _OCTAL.fullmatch(text) else int(text, 0)
    except ValueError:
        return None
    return value if INT32[0] <= value <= INT32[1] else None


__all__ = ["parse_go_bool", "parse_go_int32", "INT32"]
