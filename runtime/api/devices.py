"""The device facts Volcano's deviceshare plugin reads from nodes and pods (``api/devices/nvidia``).

GPU sharing (``gpushare``): a node reports ``volcano.sh/gpu-memory`` (all
cards together) and ``volcano.sh/gpu-number`` in ``status.capacity``; the cards
are numbered 0..n-1 with an equal share of the memory each, less the ids the
node's ``volcano.sh/gpu-unhealthy-ids`` annotation lists.  A pod asks with
container *limits* of the same names; the cards it holds are its
``volcano.sh/gpu-index`` annotation.

These are facts only: which card a pod gets, and whether a node has room, is
decided in ``policies/volcano/plugins/deviceshare.policy``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from fumarole.runtime.api.quantity import QuantityError, parse_quantity, value

GPU_MEMORY = "volcano.sh/gpu-memory"
GPU_NUMBER = "volcano.sh/gpu-number"
GPU_INDEX = "volcano.sh/gpu-index"
UNHEALTHY_GPU_IDS = "volcano.sh/gpu-unhealthy-ids"

_INT64 = 1 << 63
# More cards than any node has: a larger gpu-number is modelled as this many (bounded work per node).
MAX_CARDS = 65536
_ATOI = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True, slots=True)
class GpuCard:
    """One shareable GPU of a node: its id (what ``volcano.sh/gpu-index`` names) and its memory."""

    id: int
    memory: int


def atoi(text: str) -> int | None:
    """Go's ``strconv.Atoi``: an optional sign and decimal digits within int64, else None."""
    if not _ATOI.fullmatch(text):
        return None
    number = int(text)
    return number if -_INT64 <= number < _INT64 else None


def _quantity_value(resources: Any, name: str) -> int | None:
    """``Quantity.Value()`` of one entry of a resource list; None when absent (or not a quantity)."""
    if not isinstance(resources, dict) or name not in resources:
        return None
    try:
        return value(parse_quantity(resources[name]))
    except QuantityError:
        return None


def gpu_share_cards(node: Any) -> list[GpuCard] | None:
    """The node's healthy shareable GPUs by id (``gpushare.NewGPUDevices``); None (no device)
    when the node reports no ``volcano.sh/gpu-memory`` or no (or zero) ``volcano.sh/gpu-number``
    capacity."""
    status = node.raw.get("status") if isinstance(node.raw, dict) else None
    capacity = status.get("capacity") if isinstance(status, dict) else None
    memory, number = _quantity_value(capacity, GPU_MEMORY), _quantity_value(capacity, GPU_NUMBER)
    if memory is None or not number:
        return None
    per_card = abs(memory) // abs(number) * (1 if (memory < 0) == (number < 0) else -1)  # Go's int64 division
    unhealthy: set[int | None] = set()
    if UNHEALTHY_GPU_IDS in node.annotations:
        unhealthy = {atoi(text) for text in node.annotations[UNHEALTHY_GPU_IDS].split(",")}
    return [GpuCard(i, per_card) for i in range(min(number, MAX_CARDS)) if i not in unhealthy]


def _containers(task: Any, group: str) -> list[dict]:
    spec = task.pod.get("spec") if isinstance(task.pod, dict) else None
    containers = spec.get(group) if isinstance(spec, dict) else None
    return [c for c in containers if isinstance(c, dict)] if isinstance(containers, list) else []


def _limit(container: dict, name: str) -> int:
    resources = container.get("resources")
    amount = _quantity_value(resources.get("limits") if isinstance(resources, dict) else None, name)
    return amount or 0


def _pod_limit(task: Any, name: str) -> int:
    """The larger of the containers' limits summed and the largest init container's
    (``getGPUMemoryOfPod`` / ``getGPUNumberOfPod``), cached per session task."""
    key = "limit:" + name
    if key not in task.derived:
        containers = sum(_limit(c, name) for c in _containers(task, "containers"))
        init = max((_limit(c, name) for c in _containers(task, "initContainers")), default=0)
        task.derived[key] = max(containers, init)
    return task.derived[key]


def pod_gpu_memory(task: Any) -> int:
    """GPU memory the pod asks for in its containers' ``volcano.sh/gpu-memory`` limits."""
    return _pod_limit(task, GPU_MEMORY)


def pod_gpu_number(task: Any) -> int:
    """Whole GPUs the pod asks for in its containers' ``volcano.sh/gpu-number`` limits."""
    return _pod_limit(task, GPU_NUMBER)


def pod_gpu_indexes(task: Any) -> list[int]:
    """The card ids of the pod's ``volcano.sh/gpu-index`` annotation ("0,2"); empty when it is
    absent or any id is not an integer (``GetGPUIndex``)."""
    text = task.annotations.get(GPU_INDEX)
    if text is None:
        return []
    ids = [atoi(part) for part in text.split(",")]
    numbers = [i for i in ids if i is not None]
    return numbers if len(numbers) == len(ids) else []
