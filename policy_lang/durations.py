"""Duration text ('1h30m', '500ms') to seconds: shared by the parser (duration literals) and the
bundle loader (duration arguments), which must not need the parser to convert an argument."""

from __future__ import annotations

import re

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration_seconds(text: str) -> float:
    """'1h30m' -> 5400.0"""
    return sum(float(n) * _UNIT_SECONDS[u] for n, u in _DURATION_PART.findall(text))
