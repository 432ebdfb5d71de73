"""parse_go_float is strconv.ParseFloat(s, 64): cases from Go's strconv/atof_test.go (atoftests),
beside the inputs where Python's float() reads otherwise (drf's HDRF weights)."""

from __future__ import annotations

import math

import pytest
from fumarole.runtime.framework.go_semantics import parse_float


@pytest.mark.parametrize("text, number", [
    ("1", 1), ("+1", 1), ("1e23", 1e23), ("-0.1", -0.1), ("625e-3", 0.625), ("1.", 1), (".5", 0.5),
    ("0x1p0", 1), ("0x1p-1", 0.5), ("-0x1_ep-1", -15), ("0x1fFe2.P0", 131042), ("0x0.fp4", 15),
    ("0x.1p-2", 0.015625), ("1_23.50_0_0e+1_2", 1.235e14), ("0x_1_2.3_4_5p+1_2", 74565),
    ("2e-324", 0), ("1e-400000", 0), ("0x1p-18446744073709551616", 0),
    ("1e400", math.inf), ("-1e400", -math.inf), ("0x1p1024", math.inf), ("-0x1p2000", -math.inf),
    ("inf", math.inf), ("-Infinity", -math.inf), ("+INF", math.inf),
])
def test_what_go_reads(text, number):
    assert parse_float(text) == number


def test_nan_is_read_in_any_case():
    assert all(math.isnan(parse_float(text)) for text in ("nan", "NaN", "NAN"))


@pytest.mark.parametrize("text", [
    "", "1x", "1.1.", "0x1e2", "1p2", "1e", "1e-", ".e-1", "1\x00.2", "0x", "0x.", "0x1", "0x.1", "0x1p",
    "0x1p+", "-_123.5e+12", "_123.5e+12", "1__23.5e+12", "123_.5e+12", "123._5e+12", "123.5e+_12",
    "123.5e+12_", "0x__12.345p+12", "0x12_.345p+12", "0x12._345p+12", "0x12.345p+12_", "0x_.1p0",
    " 4", "4 ", "+nan", "-nan", "infi", "\u0663",
])
def test_what_go_refuses(text):
    assert parse_float(text) is None
