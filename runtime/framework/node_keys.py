"""Node names read through a map, for a score worked out once per group of nodes and then given
to each node of the group: shared by the standard library's ``nodes_per_key`` / ``values_by_key``
(scheduler_helper) and their batch forms over a names column (vector_lib), which sit on either
side of the session, so the work lives here, below both."""

from __future__ import annotations

from collections import Counter
from itertools import repeat

_MISSING = object()


def count_keys(names: list[str], keys: dict) -> dict:
    """How many of the names each key holds (``keys[name]``), keys in first-seen order; a name
    ``keys`` lacks is left out."""
    counts = Counter(map(keys.get, names, repeat(_MISSING)))  # a dict: keys in first-seen order
    counts.pop(_MISSING, None)
    return dict(counts)


def values_of_names(names: list[str], keys: dict, values: dict, default: float) -> list[float]:
    """Each name's value under its key, ``values[keys[name]]``, ``default`` for a name ``keys`` lacks."""
    lookup = dict(values)
    lookup[_MISSING] = default
    return list(map(lookup.__getitem__, map(keys.get, names, repeat(_MISSING))))
