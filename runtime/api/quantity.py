"""Kubernetes resource quantities, parsed exactly.

Kubernetes accepts a signed decimal number followed by a binary-SI suffix
(Ki..Ei), a decimal-SI suffix (n, u, m, k, M, G, T, P, E) or a decimal
exponent (e3, E-2).  Volcano reads CPU with ``MilliValue()`` and everything
else with ``Value()``; both round *up* to the next integer, which is why the
parse keeps an exact :class:`~fractions.Fraction` until the very end.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
    "P": Fraction(10**15), "E": Fraction(10**18),
}
_QUANTITY = re.compile(
    r"^(?P<sign>[+-]?)(?P<number>\d+\.?\d*|\.\d+)"
    r"(?:(?P<exp>[eE][+-]?\d+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$"
)


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity, or a negative one where none is allowed."""


def parse_quantity(text: object) -> Fraction:
    """Parse ``text`` (a string or a YAML number) into an exact value."""
    if isinstance(text, bool):
        raise QuantityError(f"quantity must be a number or a string, not {text!r}")
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        if not math.isfinite(text):
            raise QuantityError(f"quantity {text!r} is not finite")
        return Fraction(str(text))
    if not isinstance(text, str):
        raise QuantityError(f"quantity must be a number or a string, not {type(text).__name__}")
    match = _QUANTITY.match(text.strip())
    if match is None:
        raise QuantityError(f"{text!r} is not a Kubernetes quantity (e.g. '500m', '2', '4Gi', '1e3')")
    value = Fraction(match["number"])
    if match["exp"]:
        value *= Fraction(10) ** int(match["exp"][1:])
    else:
        suffix = match["suffix"] or ""
        value *= _BINARY.get(suffix) or _DECIMAL[suffix]
    return -value if match["sign"] == "-" else value


def milli_value(q: Fraction) -> int:
    """Kubernetes ``Quantity.MilliValue()``: thousandths, rounded up."""
    return math.ceil(q * 1000)


def value(q: Fraction) -> int:
    """Kubernetes ``Quantity.Value()``: whole units, rounded up."""
    return math.ceil(q)
