"""How an input's own text is quoted in a diagnostic: clipped, so that a hostile input (a
megabyte in one value) cannot make a huge message."""

from __future__ import annotations


def clip(text: str, limit: int = 60) -> str:
    """``text``, or its first ``limit`` characters and "..."."""
    return text if len(text) <= limit else text[:limit] + "..."
