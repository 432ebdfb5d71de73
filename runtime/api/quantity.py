"""Kubernetes resource quantities, parsed exactly as Kubernetes parses them.

The grammar (``k8s.io/apimachinery/pkg/api/resource``): an optional sign, ASCII
digits with an optional decimal point, then a binary-SI suffix (Ki..Ei), a
decimal-SI suffix (n, u, m, k, M, G, T, P, E) or a decimal exponent (``e3``,
``E-2``; the exponent is a 32-bit integer).  Kubernetes then rounds the value
*up* to a whole number of nano-units and caps its magnitude at 2^63-1; Volcano
reads CPU with ``MilliValue()`` and everything else with ``Value()``, both
rounding up again, which is why the parse keeps an exact
:class:`~fractions.Fraction` until the very end.

The value is computed from the digits' count and exponent before any power is
raised, so ``1e999999999`` is the cap at once rather than a billion-digit
number, and a thousands-of-digits quantity never reaches Python's limit on
converting long digit strings.
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction

_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_QUANTITY = re.compile(
    r"(?P<sign>[+-]?)(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?"
    r"(?:(?P<exp>[eE][+-]?[0-9]+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)",
    re.ASCII,
)
# Go's unicode.IsSpace, which Quantity.UnmarshalJSON trims around the text.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
            "\u2028\u2029\u202f\u205f\u3000"
CAP = 2**63 - 1  # Kubernetes' largest quantity: larger ones are stored as this
_CAP_DIGITS = len(str(CAP))  # 19: a value with more integer digits is over the cap
_NANO = 10**9
_CAP_NANOS = CAP * _NANO
_INT32 = 2**31
_CHUNK = 4000  # digits per int() call (Python refuses to convert more than 4,300 at once)


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity, or a negative one where none is allowed."""


def parse_quantity(text: object) -> Fraction:
    """Parse ``text`` (a string or a YAML / JSON number) into the exact value Kubernetes stores."""
    if type(text) is str:  # a cluster repeats a few quantities thousands of times
        return _parse_text(text)
    return _parse(text)


@functools.lru_cache(maxsize=4096)
def _parse_text(text: str) -> Fraction:
    return _parse(text)


def _parse(text: object) -> Fraction:
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        what = repr(text) if isinstance(text, bool) else type(text).__name__
        raise QuantityError(f"quantity must be a number or a string, not {what}")
    if isinstance(text, float) and not math.isfinite(text):
        raise QuantityError(f"quantity {text!r} is not finite")
    raw = str(text)
    match = _QUANTITY.fullmatch(raw.strip(_GO_SPACE))
    if match is None or not (match["int"] or match["frac"]):
        shown = raw if len(raw) <= 40 else raw[:40] + "..."
        raise QuantityError(f"{shown!r} is not a Kubernetes quantity (e.g. '500m', '2', '4Gi', '1e3')")
    integer, fraction = match["int"].lstrip("0"), (match["frac"] or "")
    if match["suffix"] in _BINARY:
        magnitude = _binary(integer, fraction, _BINARY[match["suffix"]])
    else:
        exponent = _exponent(match["exp"]) if match["exp"] else _DECIMAL[match["suffix"] or ""]
        magnitude = _decimal(integer, fraction, exponent)
    return -magnitude if match["sign"] == "-" else magnitude


def _exponent(text: str) -> int:
    digits = text[1:].lstrip("+-").lstrip("0") or "0"
    value = int(digits) if len(digits) <= 10 else _INT32 + 1  # out of range either way
    value = -value if text[1:2] == "-" else value
    if not -_INT32 <= value < _INT32:
        raise QuantityError(f"exponent {text[1:][:20]!r} is out of range (Kubernetes keeps exponents "
                            "as 32-bit integers)")
    return value


def _decimal(integer: str, fraction: str, exponent: int) -> Fraction:
    """|value| of digits ``integer.fraction`` times 10**exponent, rounded up to nanos and capped."""
    digits = (integer + fraction).lstrip("0")
    if not digits:
        return Fraction(0)
    power = exponent - len(fraction)  # value = int(digits) * 10**power
    if len(digits) - 1 + power >= _CAP_DIGITS:  # at least 10**19
        return Fraction(CAP)
    shift = power + 9  # value in nanos = int(digits) * 10**shift
    if shift >= 0:
        nanos = int(digits) * 10**shift  # at most 28 digits here
    else:
        keep = len(digits) + shift
        head, tail = (digits[:keep], digits[keep:]) if keep > 0 else ("0", digits)
        nanos = int(head) + (1 if tail.strip("0") else 0)
    return Fraction(nanos, _NANO) if nanos <= _CAP_NANOS else Fraction(CAP)


def _binary(integer: str, fraction: str, bits: int) -> Fraction:
    """|value| of ``integer.fraction`` times 2**bits, rounded up to nanos and capped."""
    if len(integer) > _CAP_DIGITS:
        return Fraction(CAP)
    fraction = fraction.rstrip("0")
    nanos = -(-(_int(integer + fraction) << bits) * _NANO // 10 ** len(fraction))  # ceiling division
    return Fraction(nanos, _NANO) if nanos <= _CAP_NANOS else Fraction(CAP)


def _int(digits: str) -> int:
    value = 0
    for start in range(0, len(digits), _CHUNK):
        chunk = digits[start:start + _CHUNK]
        value = value * 10 ** len(chunk) + int(chunk)
    return value


def milli_value(q: Fraction) -> int:
    """Kubernetes ``Quantity.MilliValue()``: thousandths, rounded up."""
    return math.ceil(q * 1000)


def value(q: Fraction) -> int:
    """Kubernetes ``Quantity.Value()``: whole units, rounded up."""
    return math.ceil(q)
