"""An extender's answer read the way Volcano's Go code reads it (``json.NewDecoder(body).Decode(&resp)``).

What Go accepts and refuses decides whether the plugin sees an answer or an
error, so the reading follows ``encoding/json``:

* only the first JSON value of the body is read; what follows it is ignored;
  an empty body is ``EOF``, a value cut short ``unexpected EOF``, a body past
  10 MiB whose first value is not complete by then ``http: request body too
  large``;
* ``null`` decodes to the zero response; a value of another kind than the
  struct (an array, a string) is an error;
* a key matches a field exactly or, failing that, case-insensitively; a later
  key overwrites an earlier one; unknown keys are ignored;
* a field given a value of the wrong type (a string for ``code``, ``1.5`` or
  ``1e3`` for an int, a number past int64) is an error, but decoding goes on,
  so the other fields keep what they got (the event handlers read their
  ``errorMessage`` even then); ``null`` leaves a field as it is;
* ``NaN`` and ``Infinity`` are not JSON.

Two bounds of their own: nesting deeper than Python's parser takes (about a
thousand levels; Go takes 10,000) is an error, and of a victim only its
``UID`` is read and checked (Go would also refuse a mistyped field elsewhere
in the TaskInfo).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from fumarole.runtime.framework.extender_http import Answer

_INT64 = (-(1 << 63), (1 << 63) - 1)


class _Number(str):
    """A JSON number as written: Go decides by the field's type whether it fits."""


class _Pairs(list):
    """A JSON object as its (key, value) pairs in order: Go reads duplicate keys one after the other."""


def _constant(name: str) -> Any:
    raise ValueError(f"invalid character '{name[0]}' looking for beginning of value")


_DECODER = json.JSONDecoder(object_pairs_hook=_Pairs, parse_int=_Number, parse_float=_Number,
                            parse_constant=_constant)


@dataclass
class Reply:
    """One verb's answer as the plugin sees it: ``error`` is Go's error text ("" when none)."""

    error: str = ""
    message: str = ""  # predicate's `status`; prioritize's and the event handlers' `errorMessage`
    code: int = 0  # predicate's `code`
    node_score: dict[str, float] | None = None  # prioritize's `nodeScore` (None: absent or null)
    status: int = 0  # preemptable's, reclaimable's and jobEnqueueable's `status`
    victims: list[str] = field(default_factory=list)  # the victims' UIDs
    overused: bool = False  # queueOverused's `overused`
    ready: bool = False  # jobReady's `status`

    @property
    def failed(self) -> bool:
        return self.error != ""


# -- the response structs (extender/argument.go): JSON key -> (Reply attribute, Go type) -----------
_Field = tuple[str, str]
RESPONSES: dict[str, dict[str, _Field]] = {
    "PredicateResponse": {"status": ("message", "string"), "code": ("code", "int")},
    "PrioritizeResponse": {"nodeScore": ("node_score", "map[string]float64"),
                           "errorMessage": ("message", "string")},
    "PreemptableResponse": {"status": ("status", "int"), "victims": ("victims", "[]*api.TaskInfo")},
    "ReclaimableResponse": {"status": ("status", "int"), "victims": ("victims", "[]*api.TaskInfo")},
    "JobEnqueueableResponse": {"status": ("status", "int")},
    "JobEnqueuedResponse": {},
    "QueueOverusedResponse": {"overused": ("overused", "bool")},
    "JobReadyResponse": {"status": ("ready", "bool")},
    "EventHandlerResponse": {"errorMessage": ("message", "string")},
}


def read_reply(answer: Answer, response: str) -> Reply:
    """The answer decoded into the Go struct ``response`` (a key of RESPONSES)."""
    if answer.error:
        return Reply(error=answer.error)
    reply = Reply()
    try:
        value = _first_value(answer)
    except _Refused as exc:
        reply.error = str(exc)
        return reply
    errors: list[str] = []
    _into_struct(value, response, reply, errors)
    if errors:
        reply.error = errors[0]
    return reply


class _Refused(Exception):
    """The body holds no complete JSON value: Go's Decode fails before any field is set."""


def _first_value(answer: Answer) -> Any:
    text = answer.body.decode("utf-8", errors="replace")
    start = len(text) - len(text.lstrip(" \t\r\n"))
    if start == len(text):
        raise _Refused("http: request body too large" if answer.truncated else "EOF")
    try:
        value, _end = _DECODER.raw_decode(text, start)
    except RecursionError:
        raise _Refused("json: exceeded max depth") from None
    except json.JSONDecodeError as exc:
        if answer.truncated:
            raise _Refused("http: request body too large") from None
        if exc.pos >= len(text) or exc.msg.startswith("Unterminated"):
            raise _Refused("unexpected EOF") from None
        raise _Refused(f"invalid character {_quoted(text[exc.pos])} looking for beginning of value") from None
    except ValueError as exc:  # NaN / Infinity
        raise _Refused(str(exc)) from None
    return value


def _quoted(char: str) -> str:
    return f"'{char}'" if char.isprintable() and char != "'" else repr(char)


def _is_object(value: Any) -> bool:
    return isinstance(value, _Pairs)


def _into_struct(value: Any, response: str, reply: Reply, errors: list[str]) -> None:
    if value is None:
        return
    if not _is_object(value):
        errors.append(f"json: cannot unmarshal {_go_kind(value)} into Go value of type extender.{response}")
        return
    fields = RESPONSES[response]
    folded = {key.casefold(): key for key in fields}
    for key, item in value:
        name = key if key in fields else folded.get(key.casefold())
        if name is None:
            continue
        attribute, go_type = fields[name]
        where = f"Go struct field {response}.{name} of type {go_type}"
        _DECODERS[go_type](item, reply, attribute, where, errors)


def _go_kind(value: Any) -> str:
    if _is_object(value):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, _Number):
        return "number"
    return "string" if isinstance(value, str) else "null"


def _mistyped(value: Any, where: str, errors: list[str]) -> None:
    shown = f"number {value}" if isinstance(value, _Number) else _go_kind(value)
    errors.append(f"json: cannot unmarshal {shown} into {where}")


def _string(value: Any, reply: Reply, attribute: str, where: str, errors: list[str]) -> None:
    if value is None:
        return
    if isinstance(value, str) and not isinstance(value, _Number):
        setattr(reply, attribute, value)
    else:
        _mistyped(value, where, errors)


def _int(value: Any, reply: Reply, attribute: str, where: str, errors: list[str]) -> None:
    if value is None:
        return
    number = _go_int(value)
    if number is None:
        _mistyped(value, where, errors)
    else:
        setattr(reply, attribute, number)


def _go_int(value: Any) -> int | None:
    """A JSON number Go's strconv.ParseInt takes (no fraction, no exponent, within int64)."""
    if not isinstance(value, _Number) or any(c in value for c in ".eE"):
        return None
    number = int(value)
    return number if _INT64[0] <= number <= _INT64[1] else None


def _go_float(value: Any) -> float | None:
    """A JSON number Go's strconv.ParseFloat(64) takes (finite)."""
    if not isinstance(value, _Number):
        return None
    number = float(value)
    return number if number not in (float("inf"), float("-inf")) else None


def _bool(value: Any, reply: Reply, attribute: str, where: str, errors: list[str]) -> None:
    if value is None:
        return
    if isinstance(value, bool):
        setattr(reply, attribute, value)
    else:
        _mistyped(value, where, errors)


def _score_map(value: Any, reply: Reply, attribute: str, where: str, errors: list[str]) -> None:
    if value is None:
        return  # a null map stays nil
    if not _is_object(value):
        _mistyped(value, where, errors)
        return
    scores = reply.node_score if reply.node_score is not None else {}
    reply.node_score = scores
    for key, item in value:
        if item is None:
            scores[key] = 0.0
            continue
        number = _go_float(item)
        if number is None:
            _mistyped(item, where.rsplit(" of type ", 1)[0] + " of type float64", errors)
        else:
            scores[key] = number


def _victims(value: Any, reply: Reply, attribute: str, where: str, errors: list[str]) -> None:
    if value is None:
        reply.victims = []
        return
    if not isinstance(value, list) or _is_object(value):
        _mistyped(value, where, errors)
        return
    uids: list[str] = []
    for item in value:
        if item is None:
            continue  # a nil *TaskInfo: nothing to evict
        if not _is_object(item):
            _mistyped(item, "Go value of type api.TaskInfo", errors)
            continue
        uid = ""
        for key, v in item:
            if key == "UID" or key.casefold() == "uid":
                if v is not None and (not isinstance(v, str) or isinstance(v, _Number)):
                    _mistyped(v, "Go struct field TaskInfo.UID of type api.TaskID", errors)
                elif v is not None:
                    uid = v
        uids.append(uid)
    reply.victims = uids


_DECODERS: dict[str, Callable[[Any, Reply, str, str, list[str]], None]] = {
    "string": _string, "int": _int, "bool": _bool,
    "map[string]float64": _score_map, "[]*api.TaskInfo": _victims,
}
