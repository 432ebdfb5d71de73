"""A JSON cluster read by C code only, when YAML would read the same objects from it.

Every cluster file is YAML, and JSON is YAML; but reading 20 MB through the
position-keeping YAML loader takes many seconds, and the C JSON parser a few
tenths.  The shortcut is taken only when reading the text as YAML would give
the same objects and the same verdict:

- no floats (YAML 1.1 reads ``1e3`` as text) and no NaN / Infinity;
- no duplicate keys (the YAML loader reports them; JSON keeps the last);
- nesting within the YAML loader's limit (:data:`~.yamlpos.MAX_DEPTH`).

Floats are caught by the parser's own hooks.  Duplicate keys and depth would
need a Python walk over every value, so C does both instead: the parsed
document is written back with orjson, indented, and its keys are counted
against the text's (a duplicate is a key the text has and the document lost),
and its deepest indentation bounds its depth.  Anything unusual (whitespace
before a colon, an integer beyond 64 bits) simply takes the YAML path, which
stays the authority on every diagnostic.
"""

from __future__ import annotations

import json
import re
from typing import Any, AnyStr

import orjson

from fumarole.runtime.ingest.yamlpos import MAX_DEPTH

# In valid JSON a '"' directly before ':' ends a key, unless a backslash escapes it (inside a
# string every '"' is escaped).  Whitespace between a key and its colon is legal but unusual;
# such a text takes the YAML path rather than a slower count.
_SPACED_COLON = re.compile(r'"[ \t\r\n]+:')
# orjson indents two spaces a level: a line indented this far is at least MAX_DEPTH levels deep.
_TOO_DEEP = b"\n" + b" " * (2 * MAX_DEPTH)
_LONGEST_RUN = 8  # backslashes before a '":' that _keys counts through (real text has 0 to 3)


def _no_float(_text: str) -> float:
    raise ValueError("a float")


def plain_json(text: str) -> list[Any] | None:
    """The document of a JSON text, if reading it as YAML would give the same objects; else None."""
    if not text.lstrip().startswith(("{", "[")) or _SPACED_COLON.search(text):
        return None
    try:
        doc = json.loads(text, parse_float=_no_float, parse_constant=_no_float)
        written = orjson.dumps(doc, option=orjson.OPT_INDENT_2)
    except (ValueError, RecursionError, orjson.JSONEncodeError):
        return None
    if _TOO_DEEP in written:
        return None
    keys = _keys(text)
    if keys is None or keys != _keys(written):
        return None
    return [doc]


def _keys(json_text: AnyStr) -> int | None:
    """How many keys a JSON text has: the '":' not escaped by an odd run of backslashes.
    None when some '":' follows a run of backslashes too long to count quickly (each run
    length costs a pass over the text: a hostile text must not make that quadratic)."""
    quote_colon = '":' if isinstance(json_text, str) else b'":'
    backslash = "\\" if isinstance(json_text, str) else b"\\"
    count, run, sign = 0, 0, 1
    while run <= _LONGEST_RUN:  # occurrences after exactly k backslashes = n(k) - n(k+1); escaped when k is odd
        found = json_text.count(backslash * run + quote_colon)
        if not found:
            return count
        count += sign * found
        run, sign = run + 1, -sign
    return None
