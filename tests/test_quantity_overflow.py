"""What Volcano reads from quantities too large (or too fine) for an int64, restated from
k8s.io/apimachinery v0.36.1 pkg/api/resource: quantity.go (ParseQuantity, ScaledValue, AsInt64),
amount.go (int64Amount.AsScaledInt64 / AsInt64), math.go (positiveScaleInt64, negativeScaleInt64),
scale_int.go (scaledValue), with Volcano's NewResource reading cpu and scalars with MilliValue()
and memory with Value() (pkg/scheduler/api/resource_info.go).

Every expected number below is worked out from those sources, not from fumarole:

* a decimal quantity of at most 18 digits and a scale of nano or coarser is an int64Amount
  {value, scale}; scaling it up multiplies once by 10, 100, 1000, 10^6 or 10^9 (the product wraps
  around) and digit by digit for any other power (0 on overflow); scaling it down rounds away from
  zero;
* anything else is an inf.Dec of nano-units (rounded away from zero), binary-SI ones capped at
  2^63-1 (kept at scale 0); scaledValue reads a positive one as the low 64 bits of its ceiling, a
  negative one as Go's truncating int64 division of its low 64 bits plus one for a remainder, and
  the cap (scale 0) as Int64() * 1000 for MilliValue, wrapped.
"""

from __future__ import annotations

import copy
import math
import pickle
from fractions import Fraction
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fumarole.runtime.api import devices
from fumarole.runtime.api.quantity import as_int64, milli_value, parse_quantity, value
from fumarole.runtime.api.resource import Resource
from fumarole.runtime.framework import go_semantics

MAX = 2**63 - 1


def go_int64(number: int) -> int:
    """int64 of the low 64 bits (Go's wrapping arithmetic, big.Int.Int64())."""
    number %= 2**64
    return number - 2**64 if number > MAX else number


def go_div_up(x: int, divisor: int) -> int:
    """scaledValue's int64 path: Go's x / divisor (truncating), plus one when x % divisor != 0."""
    quotient = abs(x) // divisor * (1 if x >= 0 else -1)
    return quotient + (1 if x - quotient * divisor else 0)


ONES = (10**5000 - 1) // 9  # "1" * 5000
BIG = 123456789012345678901

ROWS = [
    # text, MilliValue(), Value()
    # int64Amount, scaled up digit by digit (power not 1, 2, 3, 6, 9): 0 on overflow
    ("100P", 0, 10**17),                         # {100, 15}: milli x10^18 overflows
    ("10P", 0, 10**16),                          # {10, 15}: 10^19 > 2^63-1
    ("9P", 9 * 10**18, 9 * 10**15),              # {9, 15}: 9e18 fits
    ("9E", 0, 9 * 10**18),                       # {9, 18}: milli x10^21 overflows, value fits
    ("10E", 0, 0),                               # {10, 18}: value 10^19 overflows too
    ("1e30", 0, 0),                              # {1, 30}
    ("1e999999999", 0, 0),                       # {1, 999999999}
    ("-100P", 0, -10**17),                       # {-100, 15}
    ("-1e30", 0, 0),                             # {-1, 30}
    ("10000000000000000G", 0, go_int64(10**25)),  # {10^16, 9}: value is one x10^9, wrapped; milli x10^12 -> 0
    ("999999999999999999k", go_int64((10**18 - 1) * 10**6), go_int64((10**18 - 1) * 1000)),  # {.., 3}: x10^6, x1000
    ("99999999999999999", go_int64((10**17 - 1) * 1000), 10**17 - 1),  # 17 digits, {.., 0}: milli x1000 wraps
    ("7Ti", 7 * 2**40 * 1000, 7 * 2**40),        # binary fast path: {7 * 2^40, 0}
    ("1.5e-2147483648", 15, 0),                  # scale -2^31 - 1 wraps (int32) to 2^31 - 1: {15, 2147483647};
                                                 # milli's power 2^31 + 2 wraps negative: no scaling at all
    # int64Amount scaled down: rounded away from zero
    ("1000m", 1000, 1),                          # {1000, -3}
    ("-1.5", -1500, -2),                         # {-15, -1}
    ("-0.5m", -1, -1),                           # {-5, -4}
    ("-1n", -1, -1),                             # {-1, -9}
    # inf.Dec (19+ digits, or a scale finer than nano): positive reads are the ceiling's low 64 bits
    ("99999999999999999999", go_int64((10**20 - 1) * 1000), go_int64(10**20 - 1)),  # 20 digits
    ("9223372036854775807", go_int64(MAX * 1000), MAX),  # 19 digits: milli wraps to -1000
    ("9223372036854775808", go_int64(2**63 * 1000), go_int64(2**63)),  # 0, -2^63
    ("18446744073709551616", 0, 0),              # 2^64: low 64 bits are 0
    ("1" * 5000, go_int64(ONES * 1000), go_int64(ONES)),
    (f"{BIG}e9999", go_int64(BIG * 10**10002), go_int64(BIG * 10**9999)),  # 21 digits, exponent 9999
    ("1e-10", 1, 1),                             # scale -10: inf.Dec, rounded up to 1n
    ("1e-999999999", 1, 1),
    ("0.0000000000000000000", 0, 0),             # 20 digits, all zero: an inf.Dec zero
    ("1.5Ei", go_int64(1500 * 2**60), 1536 * 2**50),  # binary with a fraction: inf.Dec, under the cap
    ("100Pi", go_int64(100 * 2**50 * 1000), 100 * 2**50),  # precision 15-3-15-1 < 0: inf.Dec
    # the binary-SI cap: 2^63-1 at scale 0; MilliValue is Int64() * 1000, wrapped
    ("8Ei", go_int64(MAX * 1000), MAX),
    ("-8Ei", go_int64(-MAX * 1000), -MAX),
    # negative inf.Dec: truncating division of the low 64 bits, plus one for a remainder
    ("-99999999999999999999", go_div_up(go_int64(-(10**20 - 1) * 10**9), 10**6),
     go_div_up(go_int64(-(10**20 - 1) * 10**9), 10**9)),
    ("-1.0000000000000000005", -999, 0),         # 1000000001n: -1000 + 1, -1 + 1
    ("-1e-999999999", 1, 1),                     # -1n as an inf.Dec: 0 + 1 (but "-1n" is -1 above)
    (f"-{BIG}e9999", go_div_up(go_int64(-BIG * 10**10008), 10**6), go_div_up(go_int64(-BIG * 10**10008), 10**9)),
]


@pytest.mark.parametrize("text, milli, whole", ROWS, ids=[r[0][:30] for r in ROWS])
def test_milli_value_and_value_are_what_volcano_reads(text, milli, whole):
    q = parse_quantity(text)
    assert (milli_value(q), value(q)) == (milli, whole)


def test_the_table_is_not_the_ceiling():
    """The rows above differ from ceil(q * 1000) / ceil(q): the overflow rules are what they pin."""
    differ = [text for text, milli, whole in ROWS
              if (milli, whole) != (math.ceil(parse_quantity(text) * 1000), math.ceil(parse_quantity(text)))]
    assert "100P" in differ and "8Ei" in differ and "-1.5" in differ and "1e30" in differ


@pytest.mark.parametrize("text, expected", [
    ("2", (2, True)), ("0", (0, True)), ("4Gi", (4 * 2**30, True)), ("1P", (10**15, True)),
    ("1000m", (0, False)),                       # scale -3: AsInt64 gives up
    ("10000000000000000G", (go_int64(10**25), False)),  # one x10^9: the wrapped product
    ("10E", (0, False)),                         # digit by digit: 0
    ("99999999999999999999", (0, False)),        # an inf.Dec is never an int64
    ("0.0000000000000000000", (0, False)), ("1e999999999", (0, False)), ("0e999999", (0, True)),
])
def test_as_int64(text, expected):
    assert as_int64(parse_quantity(text)) == expected


@pytest.mark.parametrize("text, expected", [
    ("1e30", Fraction(10**30)),                  # a decimal quantity keeps its value
    ("99999999999999999999", Fraction(10**20 - 1)),
    ("8Ei", Fraction(MAX)), ("9Ei", Fraction(MAX)), ("-9Ei", Fraction(-MAX)),  # binary-SI: capped
    ("1.5Ei", Fraction(3 * 2**59)),
    ("1e-10", Fraction(1, 10**9)), ("-1e-10", Fraction(-1, 10**9)),
])
def test_the_exact_value_is_what_kubernetes_stores(text, expected):
    assert parse_quantity(text) == expected


def test_volcano_reads_a_100p_cpu_request_as_no_cpu():
    res = Resource.from_list({"cpu": "100P", "memory": "10E", "example.com/gpu": "10P", "pods": "9E"})
    assert (res.milli_cpu, res.memory, res.scalars["example.com/gpu"]) == (0.0, 0.0, 0.0)
    assert res.max_task_num == 9 * 10**18 and res.scalars["pods"] == float(9 * 10**18)


def test_the_stdlib_reads_the_same():
    assert go_semantics.quantity_milli_value("100P") == 0 and go_semantics.quantity_value("10E") == 0
    assert go_semantics.quantity_milli_value("8Ei") == -1000
    assert go_semantics.parse_quantity("1e400") == math.inf and go_semantics.parse_quantity("-1e400") == -math.inf
    assert go_semantics.parse_quantity("1e30") == 1e30


def test_device_counts_read_as_int64_does():
    """ExtractResourceRequest (pkg/scheduler/api/devices/util.go): the count is AsInt64's value
    whatever its flag, the memory and cores only when it is ok."""
    pod = {"spec": {"containers": [
        {"resources": {"limits": {"volcano.sh/vgpu-number": "1000m", "volcano.sh/vgpu-memory": "2000m",
                                  "volcano.sh/vgpu-cores": "30"}}},
        {"resources": {"limits": {"volcano.sh/vgpu-number": "2", "volcano.sh/vgpu-memory": "1024"}}},
    ]}}
    requests = devices.pod_vgpu_requests(SimpleNamespace(pod=pod, derived={}))
    assert [(r.nums, r.memory, r.cores) for r in requests] == [(0, 0, 30), (2, 1024, 0)]


def test_a_quantity_keeps_its_reads_through_copy_and_pickle():
    q = parse_quantity("100P")
    for other in (copy.copy(q), copy.deepcopy(q), pickle.loads(pickle.dumps(q))):
        assert other == q and milli_value(other) == 0 and value(other) == 10**17


def test_plain_fractions_read_as_their_ceiling():
    assert milli_value(Fraction(1, 3)) == 334 and value(Fraction(-3, 2)) == -1 and as_int64(Fraction(4)) == (4, True)


# -- a bounded property: never a failure, and the ceiling whenever it fits an int64 ---------------

_SUFFIXES = ["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]


@st.composite
def quantities(draw):
    sign = draw(st.sampled_from(["", "+", "-"]))
    integer = draw(st.text("0123456789", min_size=0, max_size=24))
    fraction = draw(st.none() | st.text("0123456789", min_size=0, max_size=24))
    if not integer and not fraction:
        integer = "0"
    tail = draw(st.sampled_from(_SUFFIXES) | st.integers(-40, 40).map(lambda e: f"e{e}")
                | st.integers(-2**31, 2**31 - 1).map(lambda e: f"E{e}"))
    return sign + integer + ("" if fraction is None else "." + fraction) + tail


@settings(max_examples=200, deadline=None)
@given(quantities())
def test_reads_never_fail_and_are_the_ceiling_within_int64(text):
    q = parse_quantity(text)
    milli, whole, (int64, _) = milli_value(q), value(q), as_int64(q)
    assert all(type(n) is int and -2**63 <= n <= MAX for n in (milli, whole, int64))
    if 0 <= q < Fraction(10**999):  # exact (not saturated) and non-negative
        if math.ceil(q * 1000) <= MAX:
            assert milli == math.ceil(q * 1000)
        if math.ceil(q) <= MAX:
            assert whole == math.ceil(q)
