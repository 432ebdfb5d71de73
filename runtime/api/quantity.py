"""Kubernetes resource quantities, parsed and read exactly as Kubernetes parses and reads them.

The grammar (``k8s.io/apimachinery/pkg/api/resource``, ``quantity.go``): an optional sign, ASCII
digits with an optional decimal point, then a binary-SI suffix (Ki..Ei), a decimal-SI suffix (n,
u, m, k, M, G, T, P, E) or a decimal exponent (``e3``, ``E-2``; the exponent is a 32-bit integer).

``ParseQuantity`` stores a quantity in one of two forms, and the form decides what Volcano reads:

* a decimal quantity of at most 18 digits whose scale (the exponent less the fraction digits,
  32-bit arithmetic) is nano or coarser, and a binary one of a few digits with no fraction, as an
  ``int64Amount`` ``{value, scale}`` (``100P`` is ``{100, 15}``), exactly;
* anything else as an ``inf.Dec``, rounded away from zero to a whole number of nano-units and,
  for binary-SI only, capped in magnitude at 2^63-1 (``8Ei`` is 2^63-1; ``1e30`` keeps its value).

Volcano reads CPU and scalar resources with ``MilliValue()`` and memory with ``Value()``
(``ScaledValue``, ``amount.go`` / ``math.go`` / ``scale_int.go``), and those wrap around or give
zero where the value does not fit an int64, each form its own way:

* ``int64Amount``: scaling down rounds away from zero (``-1.5`` reads -2); scaling up by 10, 100,
  1000, 10^6 or 10^9 keeps the wrapped 64-bit product, by any other power it gives 0 on overflow
  (``100P`` reads 0 millicores, ``10E`` 0 bytes);
* ``inf.Dec``: a positive value reads as its ceiling's low 64 bits (two's complement); a negative
  one divides the low 64 bits of its nano-units, truncating, then adds one for a remainder (so
  ``-1.0000000000000000005`` reads 0); the binary cap reads 2^63-1, or 1000 times it, wrapped.

:func:`parse_quantity` gives the exact stored value as a :class:`~fractions.Fraction` (a
:class:`Quantity`, which also carries what :func:`milli_value`, :func:`value` and
:func:`as_int64` read). A value of 10^1000 or more in magnitude is kept as ±10^1000 (Kubernetes
keeps it exactly; no resource is that large), while its reads stay exact: they are computed modulo
2^64 from the digits and the exponent, so ``1e999999999`` costs no billion-digit power and a
thousands-of-digits quantity never reaches Python's limit on converting long digit strings.
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
CAP = 2**63 - 1  # Kubernetes' largest binary-SI quantity (maxAllowed): larger ones are stored as this
_CAP_DIGITS = len(str(CAP))  # 19: a value with more integer digits is over the cap
_NANO = 10**9
_CAP_NANOS = CAP * _NANO
_INT32 = 2**31
_MOD64 = 2**64
_MIN64 = -2**63
_MAX_INT64_FACTORS = 18  # at most this many digits make an int64Amount (maxInt64Factors)
_HUGE_DIGITS = 1000  # a value with more integer digits is kept as ±10**_HUGE_DIGITS
_HUGE = 10**_HUGE_DIGITS
_CHUNK = 4000  # digits per int() call (Python refuses to convert more than 4,300 at once)
_FAST_POWERS = {1: 10, 2: 100, 3: 1000, 6: 10**6, 9: 10**9}  # positiveScaleInt64's wrapping cases


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity, or a negative one where none is allowed."""


class Quantity(Fraction):
    """A parsed quantity: its exact value, plus what Kubernetes' int64 accessors read from it.

    ``reads`` is ``(MilliValue(), Value(), AsInt64())``, the last a ``(value, ok)`` pair.
    Arithmetic gives plain fractions, which no longer know the form Kubernetes stored.
    """

    __slots__ = ("reads",)
    reads: tuple[int, int, tuple[int, bool]]

    def __reduce__(self):
        return _quantity, (self.numerator, self.denominator, self.reads)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def _quantity(numerator: int, denominator: int, reads: tuple) -> Quantity:
    q = Fraction.__new__(Quantity, numerator, denominator)
    q.reads = reads
    return q


def parse_quantity(text: object) -> Quantity:
    """Parse ``text`` (a string or a YAML / JSON number) into the exact value Kubernetes stores."""
    if type(text) is str:  # a cluster repeats a few quantities thousands of times
        return _parse_text(text)
    return _parse(text)


@functools.lru_cache(maxsize=4096)
def _parse_text(text: str) -> Quantity:
    return _parse(text)


def _parse(text: object) -> Quantity:
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
    # parseQuantityString: leading zeros go, an empty integer part is "0"; the fraction stays as written
    num, denom, negative = match["int"].lstrip("0") or "0", match["frac"] or "", match["sign"] == "-"
    suffix = match["suffix"]
    if suffix in _BINARY:
        return _binary(num, denom, _BINARY[suffix], negative)
    exponent = _exponent(match["exp"]) if match["exp"] else _DECIMAL[suffix or ""]
    return _decimal(num, denom, exponent, negative)


def _exponent(text: str) -> int:
    digits = text[1:].lstrip("+-").lstrip("0") or "0"
    value = int(digits) if len(digits) <= 10 else _INT32 + 1  # out of range either way
    value = -value if text[1:2] == "-" else value
    if not -_INT32 <= value < _INT32:
        raise QuantityError(f"exponent {text[1:][:20]!r} is out of range (Kubernetes keeps exponents "
                            "as 32-bit integers)")
    return value


# -- the two forms ---------------------------------------------------------------------------

def _decimal(num: str, denom: str, exponent: int, negative: bool) -> Quantity:
    if len(num) + len(denom) <= _MAX_INT64_FACTORS:
        scale = _int32(exponent - len(denom))
        if scale >= -9:
            amount = int(num + denom)
            return _int64_amount(-amount if negative else amount, scale)
    digits = (num + denom).lstrip("0")
    if not digits:
        return _ZERO_DEC
    # inf.Dec: digits * 10**-s, s its (32-bit) scale; rounded up to nanos: u = ceil(digits * 10**k)
    k = 9 - _int32(len(denom) + _int32(-exponent))
    if k > _HUGE_DIGITS + 9:  # over 10**1000 whatever the digits: no string of k zeros
        return _huge(digits, k, negative)
    if k >= 0:
        nanos = digits + "0" * k
    elif len(digits) + k <= 0:
        nanos = "1"
    else:
        head, tail = digits[:len(digits) + k], digits[len(digits) + k:]
        nanos = _increment(head) if tail.strip("0") else head
    return _inf_dec(nanos, negative)


def _binary(num: str, denom: str, bits: int, negative: bool) -> Quantity:
    # the fast path's precision: 15 - len(num) - int(float32(bits) * 3 / 10) - 1, which is 3 * bits // 10
    if not denom and 14 - len(num) - 3 * bits // 10 >= 0:
        amount = int(num) << bits
        return _int64_amount(-amount if negative else amount, 0)
    if len(num) > _CAP_DIGITS:  # num has no leading zero: at least 10**19
        return _CAPPED[negative]
    fraction = denom.rstrip("0")
    nanos = -(-(_int(num + fraction) << bits) * _NANO // 10 ** len(fraction))  # ceiling division
    if nanos == 0:
        return _ZERO_DEC
    if nanos > _CAP_NANOS:
        return _CAPPED[negative]
    return _inf_dec(str(nanos), negative)


def _int64_amount(amount: int, scale: int) -> Quantity:
    """int64Amount{amount, scale}: its value and reads."""
    reads = (_scaled_int64(amount, scale, -3), _scaled_int64(amount, scale, 0),
             (amount, True) if scale == 0 else (0, False) if scale < 0 else _positive_scale(amount, scale))
    if scale < 0:
        return _quantity(amount, 10 ** -scale, reads)
    if amount == 0:
        return _quantity(0, 1, reads)
    if len(str(abs(amount))) + scale > _HUGE_DIGITS:
        return _quantity(-_HUGE if amount < 0 else _HUGE, 1, reads)
    return _quantity(amount * 10**scale, 1, reads)


def _inf_dec(nanos: str, negative: bool) -> Quantity:
    """A non-zero inf.Dec of ``nanos`` nano-units (decimal digits, no leading zero) and its reads."""
    if negative:
        low = -_mod64(nanos) % _MOD64  # big.Int.Int64() of the unscaled value: its low 64 bits
        reads = (_truncating_ceil(_wrap(low), 10**6), _truncating_ceil(_wrap(low), _NANO), (0, False))
    else:
        reads = (_ceil_low64(nanos, 6), _ceil_low64(nanos, 9), (0, False))
    if len(nanos) - 9 > _HUGE_DIGITS:
        return _quantity(-_HUGE if negative else _HUGE, 1, reads)
    amount = int(nanos)
    return _quantity(-amount if negative else amount, _NANO, reads)


def _huge(digits: str, k: int, negative: bool) -> Quantity:
    """An inf.Dec of digits * 10**k nano-units, over 10**1000 in value: reads modulo 2**64."""
    low = _mod64(digits)
    if negative:
        wrapped = _wrap(-low * pow(10, k, _MOD64) % _MOD64)
        reads = (_truncating_ceil(wrapped, 10**6), _truncating_ceil(wrapped, _NANO), (0, False))
    else:  # k > 1009: an exact division
        reads = (_wrap(low * pow(10, k - 6, _MOD64)), _wrap(low * pow(10, k - 9, _MOD64)), (0, False))
    return _quantity(-_HUGE if negative else _HUGE, 1, reads)


# -- Kubernetes' int64 arithmetic --------------------------------------------------------------

def _scaled_int64(amount: int, scale: int, target: int) -> int:
    """int64Amount.AsScaledInt64(target)'s value, which ScaledValue returns whatever its ok."""
    if scale < target:  # negativeScaleInt64: truncate, then one away from zero for a remainder
        quotient, remainder = divmod(abs(amount), 10 ** (target - scale))
        quotient += 1 if remainder else 0
        return -quotient if amount < 0 else quotient
    return _positive_scale(amount, _int32(scale - target))[0]


def _positive_scale(amount: int, power: int) -> tuple[int, bool]:
    """positiveScaleInt64(amount, power): amount * 10**power and whether it fits an int64. Past
    int64, the single multiplications by 10, 100, 1000, 10**6 and 10**9 give the wrapped product
    and the digit-by-digit loop of every other power gives 0; a negative power (a scale that wrapped
    around) multiplies by nothing."""
    if power <= 0 or amount == 0:
        return amount, True
    factor = _FAST_POWERS.get(power)
    if factor is not None:
        if amount == _MIN64:
            return 0, False
        product = amount * factor
        return (product, True) if _MIN64 <= product <= CAP else (_wrap(product), False)
    if power > _CAP_DIGITS:
        return 0, False
    product = amount * 10**power
    return (product, True) if _MIN64 <= product <= CAP else (0, False)


def _truncating_ceil(low: int, divisor: int) -> int:
    """scaledValue's int64 path: Go's truncating division, plus one for a non-zero remainder."""
    quotient = abs(low) // divisor
    quotient = -quotient if low < 0 else quotient
    return quotient + (1 if low != quotient * divisor else 0)


def _ceil_low64(nanos: str, dif: int) -> int:
    """ceil(nanos / 10**dif) as an int64: its low 64 bits (scaledValue's big.Int path, which the
    int64 path agrees with for a positive value)."""
    head, tail = nanos[:-dif] or "0", nanos[-dif:]
    return _wrap(_mod64(head) + (1 if tail.strip("0") else 0))


def _wrap(number: int) -> int:
    """Go's int64 of ``number``'s low 64 bits."""
    number %= _MOD64
    return number - _MOD64 if number > CAP else number


def _int32(number: int) -> int:
    """Go's int32 arithmetic (a Scale, an inf.Scale): ``number`` wrapped to 32 bits."""
    return (number + _INT32) % (2 * _INT32) - _INT32


def _increment(digits: str) -> str:
    """digits + 1, as digits."""
    kept = digits.rstrip("9")
    if not kept:
        return "1" + "0" * len(digits)
    return kept[:-1] + str(int(kept[-1]) + 1) + "0" * (len(digits) - len(kept))


def _mod64(digits: str) -> int:
    if len(digits) <= _CHUNK:
        return int(digits) % _MOD64
    value = 0
    for start in range(0, len(digits), _CHUNK):
        chunk = digits[start:start + _CHUNK]
        value = (value * 10 ** len(chunk) + int(chunk)) % _MOD64
    return value


def _int(digits: str) -> int:
    value = 0
    for start in range(0, len(digits), _CHUNK):
        chunk = digits[start:start + _CHUNK]
        value = value * 10 ** len(chunk) + int(chunk)
    return value


_ZERO_DEC = _quantity(0, 1, (0, 0, (0, False)))  # an inf.Dec zero (too many digits, all zero)
_CAPPED = {negative: _quantity(-CAP if negative else CAP, 1,
                               (_wrap(-CAP * 1000 if negative else CAP * 1000), -CAP if negative else CAP,
                                (0, False)))
           for negative in (False, True)}


# -- the accessors ----------------------------------------------------------------------------

def milli_value(q: Fraction) -> int:
    """Kubernetes ``Quantity.MilliValue()``; a plain fraction (a sum, a default) reads as its
    thousandths rounded up."""
    reads = getattr(q, "reads", None)
    return math.ceil(q * 1000) if reads is None else reads[0]


def value(q: Fraction) -> int:
    """Kubernetes ``Quantity.Value()``; a plain fraction reads as its ceiling."""
    reads = getattr(q, "reads", None)
    return math.ceil(q) if reads is None else reads[1]


def as_int64(q: Fraction) -> tuple[int, bool]:
    """Kubernetes ``Quantity.AsInt64()``: ``(value, ok)``. Not ok for an inf.Dec and for an
    int64Amount of a fractional scale (``1000m`` gives ``(0, False)``), and past int64 with the
    value :func:`milli_value` would give on overflow; a plain fraction is ok when whole and in range."""
    reads = getattr(q, "reads", None)
    if reads is not None:
        return reads[2]
    if q.denominator == 1 and _MIN64 <= q <= CAP:
        return int(q), True
    return 0, False
