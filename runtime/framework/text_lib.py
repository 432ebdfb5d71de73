"""Times and strings for policies: what a site's rule needs to read annotations and labels.

A site writes times into annotations (``volcano.sh/last-checkpoint-time:
2026-11-27T02:00:00+01:00``) and names into labels in whatever case its tools
produce; these functions turn them into numbers a rule can compare with ``now``
and names it can compare case-insensitively.  Policies reach them as ``_text``
through ``runtime/schema.yaml``; docs/stdlib.md lists them.
"""

from __future__ import annotations

from fumarole.policy_lang.timestamps import LAYOUT, rfc3339_seconds
from fumarole.runtime.framework.policy_error import PolicyRuntimeError


def time(text: str) -> float:
    """Seconds since the epoch of an RFC 3339 time; a policy failure (R001, at the call) when text is not one."""
    seconds = rfc3339_seconds(text)
    if seconds is None:
        raise PolicyRuntimeError(f"time({_shown(text)}): not an RFC 3339 time such as {LAYOUT!r} "
                                 "(use parse_time to handle text that may be malformed)")
    return seconds


def parse_time(text: str) -> float | None:
    """Seconds since the epoch of an RFC 3339 time, or None."""
    return rfc3339_seconds(text)


def lower(text: str) -> str:
    return text.lower()


def upper(text: str) -> str:
    return text.upper()


def starts_with(text: str, prefix: str) -> bool:
    return text.startswith(prefix)


def ends_with(text: str, suffix: str) -> bool:
    return text.endswith(suffix)


def trim_prefix(text: str, prefix: str) -> str:
    """Go's strings.TrimPrefix: text without prefix when it starts with it, else text."""
    return text[len(prefix):] if prefix and text.startswith(prefix) else text


def trim_suffix(text: str, suffix: str) -> str:
    """Go's strings.TrimSuffix."""
    return text[:-len(suffix)] if suffix and text.endswith(suffix) else text


def _shown(text: str) -> str:
    """The text as a message quotes it: bounded, so a megabyte annotation does not flood the report."""
    return repr(text if len(text) <= 60 else text[:57] + "...")
