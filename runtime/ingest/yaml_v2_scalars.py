"""Plain YAML scalars resolved as gopkg.in/yaml.v2 (v2.4.0) resolves them.

Volcano reads volcano-scheduler.conf with gopkg.in/yaml.v2 (pkg/scheduler/util.go,
UnmarshalSchedulerConf), whose resolver is neither PyYAML's YAML 1.1 one nor YAML 1.2:
``1e3`` is a float (PyYAML wants a dot), ``0o17`` an int (PyYAML: a string), ``08`` the float
8, ``1e999`` a string (Go's ParseFloat refuses what overflows), and a timestamp stays a string
when decoded into ``interface{}``.  Plugin arguments are then typed by what this resolver
returns, so the conf loader must resolve exactly as it does; the cluster loader keeps
PyYAML's rules (sigs.k8s.io/yaml goes through JSON).
"""

from __future__ import annotations

import math
import re
from typing import Any

_WORDS: dict[str, Any] = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), None),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
# yaml.v2 tries numbers only on a scalar whose first character is one of these; a scalar
# starting with any other character is a string unless the table above names it.
_NUMBER_START = frozenset("+-0123456789")
_DOT_FLOAT = re.compile(r"\.[0-9]+(?:[eE][-+]?[0-9]+)?", re.ASCII)
# resolve.go's yamlStyleFloat, the syntax a number that is no int must have to be a float.
_YAML_STYLE_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?", re.ASCII)
_DIGITS = {2: re.compile(r"[01]+"), 8: re.compile(r"[0-7]+"), 10: re.compile(r"[0-9]+", re.ASCII),
           16: re.compile(r"[0-9a-fA-F]+")}
_PREFIX_BASE = {"b": 2, "o": 8, "x": 16}
# Go's int64 and uint64 ranges (mapstructure decodes into the same ones).
GO_INT_MIN, GO_INT_MAX, GO_UINT_MAX = -(1 << 63), (1 << 63) - 1, (1 << 64) - 1
_TIMESTAMP = re.compile(r"[0-9]{4}-")


def resolve_plain(text: str) -> Any:
    """The value yaml.v2 gives the plain (unquoted, untagged) scalar ``text`` when decoding
    into ``interface{}``: None, bool, int, float or the text itself."""
    if text in _WORDS:
        return _WORDS[text]
    if text[0] == ".":
        return _go_float(text) if _DOT_FLOAT.fullmatch(text) else text
    if text[0] not in _NUMBER_START or _TIMESTAMP.match(text):
        # A timestamp-looking scalar resolves to a time that yaml.v2 hands an interface{}
        # back as its text; no other scalar starting with four digits and '-' is a number.
        return text
    plain = text.replace("_", "")
    number = _go_parse_int(plain)
    if number is not None:
        return number
    if _YAML_STYLE_FLOAT.fullmatch(plain):
        return _go_float(plain, fallback=text)
    return text


def _go_parse_int(text: str) -> int | None:
    """strconv.ParseInt(text, 0, 64), then strconv.ParseUint(text, 0, 64) (which takes no
    sign): Go's base prefixes 0b, 0o, 0x and a bare leading 0 for octal; None when neither
    accepts the text."""
    sign, body = (-1 if text[0] == "-" else 1, text[1:]) if text[0] in "+-" else (0, text)
    base, digits = 10, body
    if len(body) > 1 and body[0] == "0":
        base = _PREFIX_BASE.get(body[1].lower(), 8) if len(body) >= 3 else 8
        digits = body[2:] if base != 8 or body[1] in "oO" else body[1:]
    if not _DIGITS[base].fullmatch(digits):
        return None
    if len(digits.lstrip("0")) > 64:  # beyond uint64 in any base; int() would refuse thousands of digits
        return None
    value = int(digits, base) * (sign or 1)
    if GO_INT_MIN <= value <= GO_INT_MAX or (sign == 0 and value <= GO_UINT_MAX):
        return value
    return None


def _go_float(text: str, fallback: str | None = None) -> float | str:
    """strconv.ParseFloat of a decimal float; Go refuses a value beyond float64's range
    (Python would give infinity), and yaml.v2 then keeps the scalar as a string."""
    value = float(text)
    return (text if fallback is None else fallback) if math.isinf(value) else value
