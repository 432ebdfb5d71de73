"""The Lark LALR parser, its tables kept between runs as plain JSON data, never as a pickle.

Building the tables from ``grammar.lark`` costs a cold ``fumarole check`` about ten times what
reading them back costs (1.2 s against 0.1 s on a busy two-core machine; reading JSON is as quick
as Lark's pickle was).  Lark's own cache unpickles its file, so
whoever can write that file runs code as the user.  Here the tables are written as JSON (reading
JSON builds only dictionaries, lists, strings and numbers; Lark then rebuilds its rules and
terminals from those, by the names of two classes it admits) and read only under the checks every
file of the cache folder gets (``cache_folder.read_private_file``: a private folder, the file ours,
regular, not a link, writable by nobody else).  A file that fails them, or fails to load, is
ignored and the tables are built again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import lark
from lark import Lark
from lark.grammar import Rule
from lark.indenter import Indenter
from lark.lexer import TerminalDef

from .cache_folder import private_folder, read_private_file, write_private_file

GRAMMAR = Path(__file__).with_name("grammar.lark")
_PAIRS = "__pairs__"  # a JSON object standing for a dictionary whose keys are not all strings
_OPTIONS = dict(parser="lalr", propagate_positions=True, maybe_placeholders=True)


def build_parser(postlex: Indenter) -> Lark:
    """The policy parser: from the cached tables when a usable file holds them, else built (and
    the file written for the next run)."""
    grammar = GRAMMAR.read_text()
    folder = private_folder(create=True)
    name = f"lark-tables-{hashlib.sha256(grammar.encode()).hexdigest()[:16]}-{lark.__version__}.json"
    if folder is not None:
        data = read_private_file(folder / name)
        if data is not None:
            loaded = _parser_of(data, postlex)
            if loaded is not None:
                return loaded
    built = Lark(grammar, postlex=postlex, cache=False, **_OPTIONS)
    if folder is not None:
        write_private_file(folder, name, tables_json(built))
    return built


def tables_json(parser: Lark) -> bytes:
    """The parser's tables as JSON (its options without the indenter, which is code)."""
    data, memo = parser.memo_serialize([TerminalDef, Rule])
    data["options"] = {k: v for k, v in data["options"].items() if k != "postlex"}
    return json.dumps(_plain({"data": data, "memo": memo}), separators=(",", ":")).encode()


def _parser_of(data: bytes, postlex: Indenter) -> Lark | None:
    try:
        tables = json.loads(data, object_hook=_unpaired)
        return Lark._load_from_dict(tables["data"], tables["memo"], postlex=postlex)
    except Exception:  # noqa: BLE001 - a damaged file of any shape is rebuilt, whatever Lark raises on it
        return None


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value) and _PAIRS not in value:
            return {k: _plain(v) for k, v in value.items()}
        return {_PAIRS: [[_plain(k), _plain(v)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _unpaired(obj: dict) -> dict:
    if len(obj) == 1 and _PAIRS in obj:
        return {(tuple(k) if isinstance(k, list) else k): v for k, v in obj[_PAIRS]}
    return obj
