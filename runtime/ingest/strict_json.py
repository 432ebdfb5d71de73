"""JSON from the network read as strictly as JSON cluster files: depth, duplicate keys, positions.

The JSON front doors -- ``fumarole serve``'s session bodies sent as
``application/json`` and the extender's Volcano structs, the API server's
replies to ``fumarole snapshot`` -- go through :func:`strict_json` before
anything looks at the document:

- malformed JSON is K001 at the scanner's line:col;
- nesting deeper than the YAML reader's limit (100) is K001, whether the C
  scanner gives up itself (RecursionError, past ~1,000 levels) or the
  document parses and is then walked without recursion;
- a key twice in one object is K001 at the second occurrence, as the file
  path reports it (``duplicate key 'name' (first at line 4, column 3)``):
  the text is read again by the positioned YAML reader, which every JSON
  text that reaches that point is valid input for;
- a number Python refuses to convert (over 4,300 digits) is K001.
"""

from __future__ import annotations

import json
from typing import Any

from fumarole.policy_lang.diagnostics import FumaroleError, Span
from fumarole.runtime.ingest import kube_errors
from fumarole.runtime.ingest.yamlpos import MAX_DEPTH, YamlError, load_all, nesting_depth


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _fail(message: str, file: str, text: str, line: int = 0, col: int = 0) -> FumaroleError:
    span = Span(line, col) if line else Span()
    return FumaroleError([kube_errors.malformed_cluster(file, span, message)], {file: text})


def _duplicate(key: str, file: str, text: str) -> FumaroleError:
    """The positioned YAML reader's diagnostic for the duplicate key, else one without a position."""
    try:
        load_all(text)
    except YamlError as exc:
        reason = exc.message.removeprefix("malformed YAML: ")
        if reason.startswith("duplicate key"):  # (YAML refuses some JSON first, e.g. escaped surrogate pairs)
            return _fail(f"malformed JSON: {reason}", file, text, exc.line, exc.col)
    return _fail(f"malformed JSON: duplicate key {key!r}", file, text)


def strict_json(text: str, file: str = "request") -> Any:
    """The document, or FumaroleError (K001) naming why it is refused."""
    try:
        doc = json.loads(text, object_pairs_hook=_refuse_duplicates)
    except json.JSONDecodeError as exc:
        raise _fail(f"malformed JSON: {exc.msg}", file, text, exc.lineno, exc.colno) from None
    except _DuplicateKey as exc:
        raise _duplicate(exc.key, file, text) from None
    except RecursionError:
        raise _fail(f"malformed JSON: nested deeper than {MAX_DEPTH} levels (fumarole's limit)", file, text) \
            from None
    except ValueError as exc:  # an integer too long to convert
        raise _fail(f"malformed JSON: {exc}", file, text) from None
    if nesting_depth(doc) > MAX_DEPTH:
        raise _fail(f"malformed JSON: nested deeper than {MAX_DEPTH} levels (fumarole's limit)", file, text)
    return doc
