"""What ``framework.Get[T]`` makes of one YAML scalar: mapstructure v1.5.0's decoding, not weakly typed.

Volcano loads its configuration with gopkg.in/yaml.v2 and decodes a ``strict`` argument with
``mapstructure.Decode`` (``pkg/scheduler/framework/arguments.go``).  The rules, from mapstructure
v1.5.0's ``decodeInt``, ``decodeFloat``, ``decodeBool`` and ``decodeString``:

- an int field takes an int, a uint (``int64(u)``: it wraps) and a float (``int64(f)``: truncated
  toward zero), never a bool or a text (``"3"`` is refused without ``WeaklyTypedInput``);
- a float field takes an int, a uint and a float, never a bool or a text;
- a bool field takes a bool only, a string field a text only;
- a null sets nothing, so the field keeps Go's zero value (the caller's concern).

YAML integers reach mapstructure as yaml.v2 resolves them: an int64 when it fits, else a uint64
when that fits, else a float64.  A float outside int64's range (or NaN, an infinity) converts to an
implementation-dependent int in Go (amd64 gives the minimum int, arm64 saturates), so no single
Volcano decision exists for it: :func:`decode` says so instead of guessing.
"""

from __future__ import annotations

import math
from typing import Any

from fumarole.runtime.ingest.yaml_v2_scalars import GO_INT_MAX, GO_INT_MIN, GO_UINT_MAX


# Why a value is refused: mapstructure cannot decode it, or Go's conversion of it depends on the machine.
UNDECODABLE = "undecodable"
MACHINE_DEPENDENT = "machine-dependent"


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def yaml_number(value: int | float) -> int | float:
    """The Go value yaml.v2 gives a YAML number: an integer outside int64 and uint64 is a float64."""
    if isinstance(value, int) and not GO_INT_MIN <= value <= GO_UINT_MAX:
        return float(value)  # may raise OverflowError: yaml.v2 then reads the text as a string
    return value


def decode_int(value: Any) -> tuple[int | None, str | None]:
    """(the int, None), or (None, why) for a value an int field does not take."""
    if not _number(value):
        return None, UNDECODABLE
    try:
        value = yaml_number(value)
    except OverflowError:
        return None, UNDECODABLE
    if isinstance(value, int):
        return (value - (1 << 64) if value > GO_INT_MAX else value), None
    if not (math.isfinite(value) and GO_INT_MIN <= value < -GO_INT_MIN):
        return None, MACHINE_DEPENDENT
    return math.trunc(value), None


def decode_float(value: Any) -> tuple[float | None, str | None]:
    """(the float, None), or (None, why) for a value a float64 field does not take."""
    if not _number(value):
        return None, UNDECODABLE
    try:
        return float(yaml_number(value)), None
    except OverflowError:
        return None, UNDECODABLE


def decode(value: Any, type_name: str) -> tuple[bool, Any, str | None]:
    """(True, the decoded value, None) or (False, ``value``, why) for an int, float, bool or string field."""
    decoded: Any
    why: str | None
    if type_name == "int":
        decoded, why = decode_int(value)
    elif type_name == "float":
        decoded, why = decode_float(value)
    elif type_name == "bool":
        decoded, why = (value, None) if isinstance(value, bool) else (None, UNDECODABLE)
    elif type_name == "string":
        decoded, why = (value, None) if isinstance(value, str) else (None, UNDECODABLE)
    else:
        raise ValueError(f"mapstructure scalars are int, float, bool and string, not {type_name}")
    return (True, decoded, None) if why is None else (False, value, why)
