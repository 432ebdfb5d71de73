"""The device facts Volcano's deviceshare plugin reads from nodes and pods (``api/devices/nvidia``).

vGPU (``vgpu``, hami-core): a node lists its cards in the
``volcano.sh/node-vgpu-register`` annotation; a pod asks per container with
``volcano.sh/vgpu-number`` / ``-memory`` / ``-cores``, and the cards it holds
are its ``volcano.sh/vgpu-ids-new`` annotation.

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

from fumarole.runtime.api.quantity import QuantityError, as_int64, parse_quantity, value

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
    sign, digits = ("-" if text[0] == "-" else ""), text.lstrip("+-").lstrip("0") or "0"
    if len(digits) > 19:  # beyond int64 whatever they are (and int() refuses 4,300 digits or more)
        return None
    number = int(sign + digits)
    return number if -_INT64 <= number < _INT64 else None


def quantity_value(resources: Any, name: str) -> int | None:
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
    memory, number = quantity_value(capacity, GPU_MEMORY), quantity_value(capacity, GPU_NUMBER)
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
    amount = quantity_value(resources.get("limits") if isinstance(resources, dict) else None, name)
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


# -- vGPU (hami-core) --------------------------------------------------------------------------

VGPU_REGISTER = "volcano.sh/node-vgpu-register"
VGPU_NUMBER = "volcano.sh/vgpu-number"
VGPU_MEMORY = "volcano.sh/vgpu-memory"
VGPU_CORES = "volcano.sh/vgpu-cores"
VGPU_ASSIGNED = "volcano.sh/vgpu-ids-new"
_GO_BOOL = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
            "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}


@dataclass(frozen=True, slots=True)
class VgpuCard:
    """One GPU a node registers for vGPU sharing: ``uuid,count,memory,type,health,mode``."""

    index: int
    uuid: str
    number: int
    memory: int
    type: str
    health: bool


@dataclass(frozen=True, slots=True)
class VgpuRequest:
    """What one container asks of vGPUs (``devices.ExtractResourceRequest``)."""

    nums: int
    memory: int
    memory_percentage: int
    cores: int


@dataclass(frozen=True, slots=True)
class VgpuUse:
    """One card a pod was given, as its ``volcano.sh/vgpu-ids-new`` annotation says."""

    uuid: str
    type: str
    memory: int
    cores: int


def vgpu_cards(node: Any) -> list[VgpuCard] | None:
    """The node's vGPU cards from its ``volcano.sh/node-vgpu-register`` annotation
    (``vgpu.NewGPUDevices``): cards separated by ``:``, each ``uuid,count,memory,type,health,mode``
    (a card of fewer fields voids the node), indexed by their place.  None unless the node also
    has allocatable vgpu-number, vgpu-cores and vgpu-memory, all non-zero, and some card."""
    text = node.annotations.get(VGPU_REGISTER)
    status = node.raw.get("status") if isinstance(node.raw, dict) else None
    allocatable = status.get("allocatable") if isinstance(status, dict) else None
    if text is None or not isinstance(allocatable, dict):
        return None
    if not all(quantity_value(allocatable, name) for name in (VGPU_NUMBER, VGPU_CORES, VGPU_MEMORY)):
        return None
    if ":" not in text:
        return None
    cards = []
    for index, entry in enumerate(text.split(":")[:MAX_CARDS]):
        if "," not in entry:
            continue
        items = entry.split(",")
        if len(items) < 6:
            return None
        cards.append(VgpuCard(index, items[0], atoi(items[1]) or 0, atoi(items[2]) or 0, items[3],
                              _GO_BOOL.get(items[4], False)))
    return cards or None


def _as_int64(resources: Any, name: str) -> tuple[int, bool] | None:
    """``Quantity.AsInt64()`` of an entry, ``(value, ok)`` (``1000m`` and a 19-digit count are not
    ok); None when absent (or not a quantity)."""
    if not isinstance(resources, dict) or name not in resources:
        return None
    try:
        quantity = parse_quantity(resources[name])
    except QuantityError:
        return None
    return as_int64(quantity)


def _resource_lists(container: dict) -> tuple[Any, Any]:
    resources = container.get("resources")
    if not isinstance(resources, dict):
        return None, None
    return resources.get("limits"), resources.get("requests")


def limits_any(task: Any, names: tuple[str, ...]) -> bool:
    """Some container of the pod limits one of the resources (Volcano's ``HasDeviceRequest``)."""
    for container in _containers(task, "containers"):
        limits, _ = _resource_lists(container)
        if isinstance(limits, dict) and any(name in limits for name in names):
            return True
    return False


def pod_vgpu_requested(task: Any) -> bool:
    """Some container limits volcano.sh/vgpu-memory or volcano.sh/vgpu-number (``checkVGPUResourcesInPod``)."""
    return limits_any(task, (VGPU_MEMORY, VGPU_NUMBER))


def pod_vgpu_requests(task: Any) -> list[VgpuRequest]:
    """Per container limiting vgpu-number (or, for one card, vgpu-memory): how many cards, and the
    memory (limit, else request; 0 is the whole card: percentage 100) and cores of each."""
    return container_device_requests(task, "vgpu", VGPU_NUMBER, VGPU_MEMORY, VGPU_CORES)


def container_device_requests(task: Any, cache_key: str, count: str, memory: str, cores: str) -> list[VgpuRequest]:
    """Volcano's ``ExtractResourceRequest``, cached per session task under ``cache_key``: per
    container limiting ``count`` (or only ``memory``: one card), the cards, the memory per card
    (limit, else request; 0 asks for the whole card: percentage 100) and the cores, each
    converted to Go's int32 as Volcano does (wrapping around)."""
    if cache_key in task.derived:
        return task.derived[cache_key]
    out = []
    for container in _containers(task, "containers"):
        limits, requests = _resource_lists(container)
        counted = _as_int64(limits, count)
        if counted is None:
            if not (isinstance(limits, dict) and memory in limits):
                continue
            nums = 1
        else:
            nums = counted[0]  # the value even when not ok, as Volcano drops the flag
        asked = _int32(_first_int64(limits, requests, memory))
        out.append(VgpuRequest(_int32(nums), asked, 100 if asked == 0 else 101,
                               _int32(_first_int64(limits, requests, cores))))
    task.derived[cache_key] = out
    return out


def _int32(number: int) -> int:
    """Go's ``int32(number)`` of an int64: the low 32 bits, signed."""
    return (number + (1 << 31)) % (1 << 32) - (1 << 31)


def _first_int64(limits: Any, requests: Any, name: str) -> int:
    found = _as_int64(limits, name)
    if found is None:
        found = _as_int64(requests, name)
    return found[0] if found is not None and found[1] else 0


def pod_vgpu_assigned(task: Any) -> list[VgpuUse]:
    """The cards of the pod's ``volcano.sh/vgpu-ids-new`` annotation, every container's in order
    (``DecodePodDevices``: containers by ``;``, cards by ``:``, ``uuid,type,memory,cores``; an
    entry with fewer fields or a bad number is skipped)."""
    text = task.annotations.get(VGPU_ASSIGNED)
    out = []
    for entry in (text or "").replace(";", ":").split(":"):
        items = entry.split(",")
        if len(items) < 4:
            continue
        memory, cores = _parse_uint32(items[2]), _parse_uint32(items[3])
        if memory is not None and cores is not None:
            out.append(VgpuUse(items[0], items[1], memory, cores))
    return out


def _parse_uint32(text: str) -> int | None:
    """Go's ``strconv.ParseUint(text, 10, 32)``."""
    digits = text.lstrip("0") or "0"  # beyond 10 digits is out of uint32 whatever they are (int() refuses 4,300+)
    if not text.isascii() or not text.isdigit() or len(digits) > 10:
        return None
    number = int(digits)
    return number if number < (1 << 32) else None
