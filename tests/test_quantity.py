from fractions import Fraction

import pytest
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
