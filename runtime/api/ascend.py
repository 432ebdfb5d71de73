"""The Ascend vNPU facts Volcano's deviceshare plugin reads (``api/devices/ascend/hami``).

Volcano reads its device configuration from a ConfigMap; a session reads none, so Volcano's
default configuration applies, which lists one Ascend type, ``Ascend310P``.  A node offers its
NPUs when it reports allocatable ``huawei.com/Ascend310P`` and registers the cards as a JSON list
in its ``hami.io/node-register-Ascend310P`` annotation; a pod asks per container with the limits
``huawei.com/Ascend310P`` (cards), ``-memory`` and ``-core``, and the cards it holds are its
``hami.io/Ascend310P-devices-allocated`` annotation.

These are facts only: which card a pod gets, and whether a node has room, is decided in
``policies/volcano/plugins/deviceshare.policy``.  Where Volcano's decoders fail, the node has no
such device (the plugin logs and skips it) and the pod holds nothing: the functions answer
``None`` / empty, never raise.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fumarole.runtime.api.devices import (
    MAX_CARDS,
    VgpuRequest,
    VgpuUse,
    container_device_requests,
    limits_any,
    quantity_value,
)

NPU_TYPE = "Ascend310P"
NPU_COUNT = "huawei.com/" + NPU_TYPE
NPU_MEMORY = NPU_COUNT + "-memory"
NPU_CORE = NPU_COUNT + "-core"
NPU_REGISTER = "hami.io/node-register-" + NPU_TYPE
NPU_ALLOCATED = "hami.io/" + NPU_TYPE + "-devices-allocated"
# The node annotation saying whether its NPUs run hami-core (Volcano's VNPUNodeSelectorAnnotation).
NPU_CORE_MODE = "hami-vnpu-core"

_INT32 = 1 << 31


@dataclass(frozen=True, slots=True)
class AscendCard:
    """One NPU a node registers (Volcano's ``DeviceInfo``): its id, how many pods may share it,
    its memory and its AI cores, and the memory a request for the whole card takes."""

    id: str
    count: int
    memory: int
    cores: int
    whole_memory: int


class _Invalid(Exception):
    """The register annotation is not what Go's ``json.Unmarshal`` into ``[]*DeviceInfo`` accepts."""


def _go_int(value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value < high:
        raise _Invalid
    return value


def _expect(value: Any, kind: type) -> None:
    if isinstance(value, bool) != (kind is bool) or not isinstance(value, kind):
        raise _Invalid


class _Object(list):
    """A JSON object as its key-value pairs in order (Go decodes every occurrence of a key)."""


# DeviceInfo's fields by their JSON name, and what each accepts (Go's types; null leaves a field be).
_INT_FIELDS = {"count": (-_INT32, _INT32), "devmem": (-_INT32, _INT32), "devcore": (-_INT32, _INT32),
               "index": (0, 1 << 64), "numa": (-(1 << 63), 1 << 63)}
_OTHER_FIELDS: dict[str, type] = {"id": str, "type": str, "mode": str, "devicevendor": str, "health": bool,
                                  "custominfo": _Object, "devicepairscore": _Object}


def _card(entry: Any) -> AscendCard:
    """One list entry as Go decodes it: keys match field names case-insensitively, the last
    occurrence wins, unknown keys are ignored, and a value of the wrong type fails the whole list."""
    if not isinstance(entry, _Object):  # a JSON null entry would be a nil *DeviceInfo
        raise _Invalid
    fields: dict[str, Any] = {}
    for key, value in entry:
        name = key.lower()
        if value is None or (name not in _INT_FIELDS and name not in _OTHER_FIELDS):
            continue
        if name in _INT_FIELDS:
            fields[name] = _go_int(value, *_INT_FIELDS[name])
        else:
            _expect(value, _OTHER_FIELDS[name])
            fields[name] = value
    return _card_of(fields)


def _card_of(fields: dict[str, Any]) -> AscendCard:
    memory = fields.get("devmem", 0)
    return AscendCard(fields.get("id", ""), fields.get("count", 0), memory, fields.get("devcore", 0),
                      _whole_memory(memory))


def _whole_memory(memory: int) -> int:
    """``ResourceReqs`` for a request of 100 percent: Go's int32 ``memory * 100 / 100``, whose
    product wraps around and whose quotient truncates toward zero."""
    product = (memory * 100 + _INT32) % (2 * _INT32) - _INT32
    return abs(product) // 100 * (1 if product >= 0 else -1)


def _no_constant(name: str) -> Any:
    raise _Invalid  # NaN and Infinity are not JSON to Go


def decode_register(text: str) -> list[AscendCard] | None:
    """The cards of a ``hami.io/node-register-<type>`` annotation (``UnMarshalNodeDevices``), in
    their order; None when Go would fail to decode it, or it lists no card."""
    try:
        data = json.loads(text, object_pairs_hook=_Object, parse_constant=_no_constant, parse_float=_no_float)
        if data is None:
            return None
        if not isinstance(data, list):
            raise _Invalid
        cards = [_card(entry) for entry in data[:MAX_CARDS]]
    except (_Invalid, ValueError, RecursionError):
        return None
    return cards or None


def _no_float(text: str) -> Any:
    raise _Invalid  # a number with a fraction or an exponent does not decode into Go's integers


def ascend_cards(node: Any) -> list[AscendCard] | None:
    """The node's Ascend310P cards (``hami.NewAscendDevices``): none unless the node reports a
    non-zero allocatable ``huawei.com/Ascend310P`` and its register annotation decodes to some
    card.  A repeated id is one card (Volcano keys them by id): the last entry's, at the first's place."""
    status = node.raw.get("status") if isinstance(node.raw, dict) else None
    allocatable = status.get("allocatable") if isinstance(status, dict) else None
    if not quantity_value(allocatable, NPU_COUNT):
        return None
    text = node.annotations.get(NPU_REGISTER)
    cards = decode_register(text) if text is not None else None
    if cards is None:
        return None
    return list({card.id: card for card in cards}.values())


def ascend_core_mode(node: Any) -> bool:
    """The node's NPUs run hami-core: its ``hami-vnpu-core`` annotation is ``true`` (Volcano's
    default configuration says false for a node without it)."""
    return node.annotations.get(NPU_CORE_MODE) == "true"


def pod_ascend_requested(task: Any) -> bool:
    """Some container limits huawei.com/Ascend310P or its -memory (``HasDeviceRequest``)."""
    return limits_any(task, (NPU_COUNT, NPU_MEMORY))


def pod_ascend_requests(task: Any) -> list[VgpuRequest]:
    """Per container limiting huawei.com/Ascend310P (or, for one card, its -memory): how many
    cards, and the memory and -core of each (``ExtractResourceRequest``)."""
    return container_device_requests(task, "ascend", NPU_COUNT, NPU_MEMORY, NPU_CORE)


def _parse_int32(text: str) -> int:
    """Go's ``strconv.ParseInt(text, 10, 32)`` with its error ignored: 0 when not a number, the
    nearest int32 when out of range."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not body.isascii() or not body.isdigit():
        return 0
    digits = body.lstrip("0") or "0"  # beyond 10 digits is out of int32 whatever they are (int() refuses 4,300+)
    number = (-1 if text[0] == "-" else 1) * (int(digits) if len(digits) <= 10 else _INT32)
    return max(-_INT32, min(number, _INT32 - 1))


def pod_ascend_assigned(task: Any) -> list[VgpuUse]:
    """The cards of the pod's ``hami.io/Ascend310P-devices-allocated`` annotation as Volcano's
    ``DecodeContainerDevices`` reads the whole of it: entries split at ``:``, those without a comma
    skipped (so a second container's first card keeps its leading ``;`` in its id), and an entry
    of fewer than four fields voids them all."""
    text = task.annotations.get(NPU_ALLOCATED)
    out: list[VgpuUse] = []
    for entry in (text or "").split(":"):
        if "," not in entry:
            continue
        items = entry.split(",")
        if len(items) < 4:
            return []
        out.append(VgpuUse(items[0], items[1], _parse_int32(items[2]), _parse_int32(items[3])))
    return out
