"""Duration literal text ('1h30m', '500ms') to seconds, for the parser.  A duration *argument* is read
with Go's time.ParseDuration instead (runtime/framework/go_semantics.py), as Volcano's plugins read one."""

from __future__ import annotations

import re

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration_seconds(text: str) -> float:
    """'1h30m' -> 5400.0"""
    return sum(float(n) * _UNIT_SECONDS[u] for n, u in _DURATION_PART.findall(text))
