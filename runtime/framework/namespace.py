"""The namespace compiled policies run in: the documented standard library.

Every name here is reachable from policies only through ``runtime/schema.yaml``
(the checker refuses anything else); docs/stdlib.md lists them.  Functions take
and return values: no policy ever mutates a Resource it did not create.
"""

from __future__ import annotations

import math

from fumarole.runtime.api import resource as R
from fumarole.runtime.api.fit import FitError
from fumarole.runtime.api.resource import Resource
from fumarole.runtime.framework import eviction as _eviction_module
from fumarole.runtime.framework import go_semantics as _go_module
from fumarole.runtime.framework import vector_lib as _vector_module
from fumarole.runtime.k8s import plugins as _k8s_module


class PolicyRuntimeError(Exception):
    """A policy failed while running (loop budget, missing map key...), with its position."""

    def __init__(self, message: str, file: str = "", line: int = 0, col: int = 0) -> None:
        super().__init__(message)
        self.message, self.file, self.line, self.col = message, file, line, col


class _ResourceLibrary:
    """Resource functions in value style; names follow runtime/schema.yaml."""

    Resource = Resource
    less_equal = staticmethod(R.less_equal)
    less = staticmethod(R.less)
    less_partly = staticmethod(R.less_partly)
    less_equal_partly = staticmethod(R.less_equal_partly)
    equal = staticmethod(R.equal)
    exactly_equal = staticmethod(R.exactly_equal)
    exceeded_part = staticmethod(R.exceeded_part)
    res_max = staticmethod(R.res_max)
    res_min = staticmethod(R.res_min)
    share = staticmethod(R.share)
    less_equal_partly_with_dimension = staticmethod(R.less_equal_partly_with_dimension)
    less_equal_partly_with_dimension_zero_filtered = staticmethod(R.less_equal_partly_with_dimension_zero_filtered)
    greater_partly_with_dimension = staticmethod(R.greater_partly_with_dimension)
    greater_partly_relevant = staticmethod(R.greater_partly_relevant)

    @staticmethod
    def insufficient(l: Resource, r: Resource) -> list[str]:
        return R.less_equal_with_names(l, r, R.ZERO)[1]

    @staticmethod
    def within_requested(l: Resource | None, r: Resource | None, req: Resource) -> bool:
        return R.less_equal_with_dimension(l, r, req)[0]

    @staticmethod
    def exceeding_requested(l: Resource | None, r: Resource | None, req: Resource) -> list[str]:
        return R.less_equal_with_dimension(l, r, req)[1]

    @staticmethod
    def increased(l: Resource, r: Resource) -> Resource:
        return R.diff(l, r, R.ZERO)[0]

    @staticmethod
    def decreased(l: Resource, r: Resource) -> Resource:
        return R.diff(l, r, R.ZERO)[1]

    @staticmethod
    def min_dimension(l: Resource, r: Resource, mode: str) -> Resource:
        return l.clone().min_dimension(r, mode)

    @staticmethod
    def has_dimension(r: Resource, name: str) -> bool:
        if name in ("cpu", "memory"):
            return True
        return r.scalars is not None and name in r.scalars

    @staticmethod
    def with_value(r: Resource, name: str, value: float) -> Resource:
        out = r.clone()
        if name == "cpu":
            out.milli_cpu = value
        elif name == "memory":
            out.memory = value
        else:
            if out.scalars is None:
                out.scalars = {}
            out.scalars[name] = value
        return out


def _div(a: float, b: float) -> float:
    """IEEE division as Go does it for floats: x/0 is +-Inf, 0/0 is NaN."""
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0 or a != a:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _str(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if value is None:
        return "none"
    return str(value)


def _parse_float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _loop_limit(line: int, col: int) -> None:
    raise PolicyRuntimeError(f"loop ran more than {LOOP_LIMIT} times; a policy must terminate", "", line, col)


LOOP_LIMIT = 10_000_000


def namespace() -> dict:
    """Fresh globals for exec'ing a compiled policy module."""
    return {
        "__builtins__": {"len": len, "max": max, "min": min, "sum": sum, "abs": abs, "list": list,
                         "range": range, "int": int, "float": float, "bool": bool},
        "_res": _ResourceLibrary,
        "_k8s": _k8s_module,
        "_go": _go_module,
        "_eviction": _eviction_module,
        "_V": _vector_module,
        "_math": math,
        "_div": _div,
        "_str": _str,
        "_str_split": lambda s, sep: s.split(sep),
        "_parse_float": _parse_float,
        "_FitError": FitError,
        "_LOOP_LIMIT": LOOP_LIMIT,
        "_loop_limit": _loop_limit,
    }
