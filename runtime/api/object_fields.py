"""Fields of cluster objects that no schema attribute names, as read-only text maps.

A site keeps its own settings in a Queue's spec (`spec.tier`, `spec.department`,
a CRD field a newer Volcano added) and wants a policy to read them as it reads
labels.  The map is built afresh at every read, so a policy that changes it
changes only its own copy, never the queue.
"""

from __future__ import annotations

import json
from typing import Any

from fumarole.runtime.api.model import Queue


def text_of(value: Any) -> str:
    """A field value as text: strings as they are, true/false, numbers as written, objects and lists as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, separators=(",", ":"), default=str)


def queue_spec(queue: Queue) -> dict[str, str]:
    raw = getattr(queue, "raw", None)
    spec = raw.get("spec") if isinstance(raw, dict) else None
    return {str(k): text_of(v) for k, v in spec.items()} if isinstance(spec, dict) else {}
