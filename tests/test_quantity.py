from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from fumarole.runtime.framework import go_semantics
from fumarole.runtime.api.quantity import (
    QuantityError,
    milli_value,
    parse_quantity,
    value,
)


@pytest.mark.parametrize("text, expected", [
    ("2", Fraction(2)), ("500m", Fraction(1, 2)), ("1.5", Fraction(3, 2)), (".5", Fraction(1, 2)),
    ("4Gi", Fraction(4 * 2**30)), ("1Ki", Fraction(1024)), ("2Ei", Fraction(2 * 2**60)),
    ("1k", Fraction(1000)), ("3M", Fraction(3 * 10**6)), ("1G", Fraction(10**9)), ("1T", Fraction(10**12)),
    ("1P", Fraction(10**15)), ("1E", Fraction(10**18)), ("100u", Fraction(1, 10**4)), ("7n", Fraction(7, 10**9)),
    ("1e3", Fraction(1000)), ("1E-2", Fraction(1, 100)), ("+3", Fraction(3)), ("-1", Fraction(-1)),
    (5, Fraction(5)), (0.25, Fraction(1, 4)),
])
def test_parses_every_kubernetes_form(text, expected):
    assert parse_quantity(text) == expected


@pytest.mark.parametrize("text", ["", "1.2.3", "Gi", "1GB", "1 Gi", "abc", "1e", True, None, [1]])
def test_rejects_what_kubernetes_rejects(text):
    with pytest.raises(QuantityError):
        parse_quantity(text)


def test_rounding_up_like_milli_value_and_value():
    assert milli_value(parse_quantity("1.0001m")) == 2
    assert value(parse_quantity("1.5")) == 2
    assert milli_value(parse_quantity("250m")) == 250


# -- Kubernetes' grammar exactly, and nothing a hostile value can make slow (issue 8) -----------

CAP = 2**63 - 1
HUGE = Fraction(10**1000)  # where fumarole stops keeping a decimal value exactly (Kubernetes does not cap it)


@pytest.mark.parametrize("text, expected", [
    ("1e999999999", HUGE),                     # at once (no billion-digit power)
    ("1e400", Fraction(10**400)),              # a decimal quantity is not capped
    ("1" * 5_000, HUGE),                       # past Python's 4,300-digit conversion limit
    ("9223372036854775808", Fraction(2**63)),
    ("-1e999999999", -HUGE),
    ("8Ei", Fraction(CAP)),                    # a binary-SI one is, at 2^63-1
    ("-8Ei", Fraction(-CAP)),
    ("1e-999999999", Fraction(1, 10**9)),      # rounded up to one nano-unit, not to zero
    ("0.1n", Fraction(1, 10**9)),
    ("1.0000000001", Fraction(1000000001, 10**9)),
    ("0." + "0" * 5_000 + "1Ki", Fraction(1, 10**9)),
    ("1.G", Fraction(10**9)), ("1E", Fraction(10**18)), ("1E3", Fraction(1000)), ("1e+3", Fraction(1000)),
    ("0.5Ki", Fraction(512)), ("\t2 ", Fraction(2)), ("1e2147483647", HUGE),
    (10**30, Fraction(10**30)), (1e-12, Fraction(1, 10**9)),
])
def test_values_are_what_kubernetes_stores(text, expected):
    assert parse_quantity(text) == expected


@pytest.mark.parametrize("text, message", [
    ("١٢", "is not a Kubernetes quantity"),          # Arabic-Indic digits: ASCII only
    ("１２", "is not a Kubernetes quantity"),         # full-width digits
    ("1e2147483648", "exponent '2147483648' is out of range"),
    ("1e-99999999999", "exponent '-99999999999' is out of range"),
    ("1e" + "9" * 5_000, "is out of range"),
    (".", "is not a Kubernetes quantity"), ("+", "is not a Kubernetes quantity"),
    ("1Ki3", "is not a Kubernetes quantity"), ("1e3.5", "is not a Kubernetes quantity"),
    ("1kk", "is not a Kubernetes quantity"), ("1i", "is not a Kubernetes quantity"),
    ("x" * 5_000, "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' is not"),  # the message stays short
    (float("inf"), "is not finite"), (float("nan"), "is not finite"),
])
def test_everything_else_is_refused_with_a_reason(text, message):
    with pytest.raises(QuantityError) as caught:
        parse_quantity(text)
    assert message in str(caught.value)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**7), st.sampled_from(["", "m", "k", "Mi", "Gi"]))
def test_the_stdlib_reads_milli_value_and_value_exactly(thousandths, suffix):
    """usage's be_cpu / be_mem: "2.007" is 2007 millicores, where a float scaled by 1000 and rounded up
    gives 2008 (plugins/usage/authored-a-best-effort-quantity-is-read-exactly)."""
    text = f"{thousandths // 1000}.{thousandths % 1000:03d}{suffix}"
    exact = parse_quantity(text)
    assert go_semantics.quantity_milli_value(text) == milli_value(exact)
    assert go_semantics.quantity_value(text) == value(exact)
    assert go_semantics.quantity_milli_value("2.007") == 2007 and go_semantics.quantity_value("2.007") == 3


def test_the_stdlib_gives_none_for_what_kubernetes_refuses():
    assert go_semantics.quantity_milli_value("1 Gi") is None and go_semantics.quantity_value("x") is None
