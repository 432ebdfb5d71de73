"""Go and Kubernetes parsers the sla and tdm policies rely on.

Volcano's sla and tdm plugins read waiting times, evict periods, clock times
and disruption budgets with Go's standard library and apimachinery.  A near
miss (another duration dialect, a percentage rounded down, a time zone other
than the process's local one) would change which job goes first or which pod
is evicted, so these functions follow the Go code exactly.  Each returns None
where Go returns an error: what an error means is the policy's decision.
Policies reach them as ``_go`` through ``runtime/schema.yaml``.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
from fractions import Fraction
from typing import Callable

from fumarole.runtime.api.devices import atoi
from fumarole.runtime.api.quantity import QuantityError, milli_value, value
from fumarole.runtime.api.quantity import parse_quantity as exact_quantity

_UNIT_NANOS = {
    b"ns": 1,
    b"us": 1_000,
    "µs".encode(): 1_000,  # U+00B5 micro sign
    "μs".encode(): 1_000,  # U+03BC Greek mu
    b"ms": 1_000_000,
    b"s": 1_000_000_000,
    b"m": 60_000_000_000,
    b"h": 3_600_000_000_000,
}
_LIMIT = 1 << 63
_DIGITS = b"0123456789"
# strings.TrimSpace: ASCII white space, NEL, NBSP and Unicode's White_Space.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
            "\u2028\u2029\u202f\u205f\u3000"


def parse_duration(text: str) -> float | None:
    """Go's time.ParseDuration, in seconds; None where Go fails.

    Go accepts "1h2m3s4ms5us6ns", fractions ("1.5h", ".5s"), a sign and a bare
    "0", and nothing else: no spaces, no unitless numbers, no days.
    """
    nanos = _duration_nanos(text.encode())
    return None if nanos is None else nanos / 1e9


def duration_text(seconds: float) -> str:
    """Go's time.Duration.String of a duration in seconds (rounded to the nanosecond): "1m0s",
    "1h30m0s", "1.5s", "500ms", "0s" -- how Volcano logs a duration, and so how a kept default is named."""
    nanos = round(seconds * 1e9)
    sign, nanos = ("-" if nanos < 0 else ""), abs(nanos)
    if nanos == 0:
        return "0s"
    if nanos < 1_000_000_000:  # below a second: the largest of ns, µs, ms that keeps a whole part
        for scale, unit in ((1_000_000, "ms"), (1_000, "µs"), (1, "ns")):
            if nanos >= scale:
                return sign + _decimal(nanos, scale) + unit
    minutes, rest = divmod(nanos, 60_000_000_000)
    hours, minutes = divmod(minutes, 60)
    text = _decimal(rest, 1_000_000_000) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{text}"
    return f"{sign}{minutes}m{text}" if minutes else sign + text


def _decimal(value: int, scale: int) -> str:
    """``value / scale`` in decimal, the fraction's trailing zeros dropped (Go's fmtFrac + fmtInt)."""
    whole, fraction = divmod(value, scale)
    digits = str(fraction).rjust(len(str(scale)) - 1, "0").rstrip("0") if scale > 1 else ""
    return f"{whole}.{digits}" if digits else str(whole)


def _duration_nanos(s: bytes) -> int | None:
    """ParseDuration on the UTF-8 bytes (Go scans bytes), in integer nanoseconds."""
    negative = s[:1] == b"-"
    if s[:1] in (b"-", b"+"):
        s = s[1:]
    if s == b"0":
        return 0
    if not s:
        return None
    total = 0
    while s:
        part = _duration_part(s)
        if part is None:
            return None
        nanos, s = part
        total += nanos
        if total > _LIMIT:
            return None
    if negative:
        return -total
    return total if total < _LIMIT else None


def _duration_part(s: bytes) -> tuple[int, bytes] | None:
    """One `[0-9]*(.[0-9]*)?unit` chunk: its nanoseconds and the rest of the text."""
    if s[0] not in _DIGITS and s[:1] != b".":
        return None
    whole, rest = _leading_int(s)
    if whole is None:
        return None
    has_whole = len(rest) != len(s)
    fraction, scale, has_fraction = 0, 1.0, False
    if rest[:1] == b".":
        after_dot = rest[1:]
        fraction, scale, rest = _leading_fraction(after_dot)
        has_fraction = len(rest) != len(after_dot)
    if not has_whole and not has_fraction:
        return None
    end = 0
    while end < len(rest) and rest[end] not in _DIGITS and rest[end] != ord("."):
        end += 1
    unit = _UNIT_NANOS.get(rest[:end])
    if unit is None or whole > _LIMIT // unit:
        return None
    nanos = whole * unit
    if fraction > 0:
        nanos += int(float(fraction) * (float(unit) / scale))
        if nanos > _LIMIT:
            return None
    return nanos, rest[end:]


def _leading_int(s: bytes) -> tuple[int | None, bytes]:
    """The leading [0-9]* as an integer; None on overflow past 1<<63."""
    value, i = 0, 0
    while i < len(s) and s[i] in _DIGITS:
        if value > _LIMIT // 10:
            return None, s
        value = value * 10 + s[i] - ord("0")
        if value > _LIMIT:
            return None, s
        i += 1
    return value, s[i:]


def _leading_fraction(s: bytes) -> tuple[int, float, bytes]:
    """The leading [0-9]* after a dot; digits past int64 precision are skipped, not errors."""
    value, scale, i, overflow = 0, 1.0, 0, False
    while i < len(s) and s[i] in _DIGITS:
        if not overflow:
            grown = value * 10 + s[i] - ord("0")
            if value > (_LIMIT - 1) // 10 or grown > _LIMIT:
                overflow = True
            else:
                value, scale = grown, scale * 10
        i += 1
    return value, scale, s[i:]


def trim_space(text: str) -> str:
    """Go's strings.TrimSpace."""
    return text.strip(_GO_SPACE)


def parse_clock(text: str) -> int | None:
    """Go's time.Parse("15:04", text) as minutes after midnight; None where Go fails.

    The hour has one or two digits (0-23), the minute exactly two (00-59), and
    nothing may surround them: "7:05" and "07:05" parse, "7:5" and " 7:05" do not.
    """
    hour, rest = _clock_number(text, exact=False)
    if hour is None or hour > 23 or rest[:1] != ":":
        return None
    minute, rest = _clock_number(rest[1:], exact=True)
    if minute is None or minute > 59 or rest:
        return None
    return hour * 60 + minute


def _clock_number(text: str, exact: bool) -> tuple[int | None, str]:
    """Go's getnum: one or two leading ASCII digits (exactly two when exact)."""
    count = 0
    while count < 2 and count < len(text) and text[count] in "0123456789":
        count += 1
    if count == 0 or (exact and count < 2):
        return None, text
    return int(text[:count]), text[count:]


def local_time(t: float, days: int, minutes: int) -> float:
    """Epoch seconds of `minutes` after local midnight, `days` after t's local date.

    Go's time.Date(y, m, d+days, h, min, 0, 0, time.Local): the process's time
    zone decides what "today" is, as it does for Volcano's scheduler.
    """
    today = _dt.datetime.fromtimestamp(t).date()
    watched = getattr(t, "stays_within", None)
    if watched is not None:  # a replay's watched clock (runtime/whatif/clock_reads.py): t's local date decides
        watched(*_local_day(today, float(t)))
    day = today + _dt.timedelta(days=days)
    return _dt.datetime.combine(day, _dt.time(minutes // 60, minutes % 60)).timestamp()


def _local_day(day: _dt.date, t: float) -> tuple[float, float]:
    """The instants from ``day``'s local midnight to the next, where the UTC offset is the same at
    both (no daylight-saving change between); else only ``t`` itself, promising nothing."""
    start = _dt.datetime.combine(day, _dt.time()).timestamp()
    end = _dt.datetime.combine(day + _dt.timedelta(days=1), _dt.time()).timestamp()
    offsets = {_dt.datetime.fromtimestamp(x).astimezone().utcoffset() for x in (start, t, end - 1)}
    return (start, end) if len(offsets) == 1 and start <= t < end else (t, t)


def int32(number: int) -> int:
    """Go's ``int32(number)``, and so the result of int32 arithmetic: the low 32 bits, signed."""
    return (number + 2**31) % 2**32 - 2**31


def int_or_percent(value: str, total: int) -> int | None:
    """apimachinery's intstr.Parse then GetValueFromIntOrPercent(total, roundUp=true).

    An integer string is taken as is (truncated to int32, as IntOrString
    stores it); anything else has every "%" removed and is a percentage of
    `total`, rounded up; None where that is not an integer either.
    """
    number = atoi(value)
    if number is not None:
        return int32(number)
    percent = atoi(value.replace("%", ""))
    if percent is None:
        return None
    return int(math.ceil(float(percent) * float(total) / 100))


def pow(base: float, exponent: float) -> float:
    """Go's math.Pow for the cases Python's refuses: a zero base with a negative exponent is +Inf."""
    if base == 0 and exponent < 0:
        return math.inf
    return math.pow(base, exponent)


def json_int_map(text: str) -> dict[str, int] | None:
    """Go's json.Unmarshal of text into a map[string]int (such as the resource-strategy-fit
    plugin's volcano.sh/resource-strategy-weight annotation); None where Go returns an error.

    Go takes a JSON object whose values are integers within int64 (no fraction, no exponent) or
    null (the key then holds 0); `null` for the whole text is an empty map.  NaN, Infinity, a
    string, a list or an object as a value, trailing text: errors.  A repeated key keeps its last
    value.
    """
    try:
        value = json.loads(text, parse_float=_no_json_value, parse_constant=_no_json_value,
                           parse_int=_json_int64)
    except (ValueError, RecursionError):
        return None
    if value is None:
        return {}
    if not isinstance(value, dict):
        return None
    out: dict[str, int] = {}
    for key, item in value.items():
        if item is None:
            out[key] = 0
        elif isinstance(item, int) and not isinstance(item, bool):
            out[key] = item
        else:
            return None
    return out


def _no_json_value(text: str) -> None:
    raise ValueError(f"not an integer: {text}")


def _json_int64(text: str) -> int:
    value = int(text)
    if not -_LIMIT <= value < _LIMIT:
        raise ValueError(f"out of int64 range: {text}")
    return value


# strconv.ParseFloat's syntax (Go's floating-point literals): ASCII decimal digits, "_" only between
# digits, hexadecimal mantissas only with a "p" exponent, and Inf / Infinity / NaN in any case (a
# sign before Inf only).  No white space: Python's float() strips it, and takes non-ASCII digits
# and "+nan" too, but refuses hexadecimal.
_GO_DIGITS = r"[0-9]+(?:_[0-9]+)*"
_GO_HEX_DIGITS = r"[0-9a-fA-F]+(?:_[0-9a-fA-F]+)*"
_GO_DECIMAL = re.compile(rf"[+-]?(?:{_GO_DIGITS}(?:\.(?:{_GO_DIGITS})?)?|\.{_GO_DIGITS})(?:[eE][+-]?{_GO_DIGITS})?")
_GO_HEX = re.compile(rf"[+-]?0[xX](?:_?{_GO_HEX_DIGITS}(?:\.(?:{_GO_HEX_DIGITS})?)?|\.{_GO_HEX_DIGITS})"
                     rf"[pP][+-]?{_GO_DIGITS}")
_GO_SPECIAL = re.compile(r"[+-]?(?:inf|infinity)|nan", re.IGNORECASE)


def parse_float(text: str) -> float | None:
    """strconv.ParseFloat(text, 64): its value, with ±Inf beyond float64's range (Go returns that
    beside ErrRange, and callers that drop the error use it); None on a syntax error."""
    if _GO_DECIMAL.fullmatch(text) or _GO_SPECIAL.fullmatch(text):
        return float(text.replace("_", ""))
    if not _GO_HEX.fullmatch(text):
        return None
    try:
        return float.fromhex(text.replace("_", ""))
    except OverflowError:
        return -math.inf if text.startswith("-") else math.inf


def parse_quantity(text: str) -> float | None:
    """resource.ParseQuantity's value (the exact quantity as a float: "250m" is 0.25, "1e400" is
    +Inf); None where Kubernetes refuses the text."""
    try:
        exact = exact_quantity(text)
    except QuantityError:
        return None
    try:
        return float(exact)
    except OverflowError:
        return math.inf if exact > 0 else -math.inf


def quantity_milli_value(text: str) -> int | None:
    """Quantity.MilliValue() of ``text``, exact (a float's ``q * 1000`` rounds "0.1" up to 101); None
    where Kubernetes refuses the text."""
    return _exact_quantity(text, milli_value)


def quantity_value(text: str) -> int | None:
    """Quantity.Value() of ``text``, exact; None where Kubernetes refuses the text."""
    return _exact_quantity(text, value)


def _exact_quantity(text: str, unit: Callable[[Fraction], int]) -> int | None:
    try:
        return unit(exact_quantity(text))
    except QuantityError:
        return None


_JSON_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_JSON_U_ESCAPED = {"<", ">", "&", "\u2028", "\u2029"}


def json_string(text: str) -> str:
    """A string as Go's json.Marshal writes it (Go 1.22 and later): quoted; quote, backslash and
    the short control escapes by name, other control characters and the HTML-sensitive ``<``,
    ``>``, ``&`` (and U+2028, U+2029) as ``\\u00XX``; a lone surrogate, which is not UTF-8, as
    U+FFFD."""
    out = ['"']
    for char in text:
        if char in _JSON_SHORT_ESCAPES:
            out.append(_JSON_SHORT_ESCAPES[char])
        elif char < " " or char in _JSON_U_ESCAPED:
            out.append(f"\\u{ord(char):04x}")
        elif "\ud800" <= char <= "\udfff":
            out.append("\ufffd")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)
