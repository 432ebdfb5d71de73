"""The field tables of loading compiled into straight-line predicates: is this object clean?

Validation walks every object of a cluster twice, once for values of the wrong
type (K007) and once for unknown fields (K103).  Walked generically, a table
costs a generator per level and a dictionary probe per path; a cluster of
50,000 pods spends seconds there, nearly always to find nothing.  So each
table is also compiled, once at import, into Python source with one local per
level and the type tests written out, and that predicate answers the common
question ("anything to report?") in microseconds.  Only when it says no does
the generic walk run, to produce the diagnostics with their paths and
positions, which therefore stay exactly as before.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Callable

Predicate = Callable[[Any], bool]

# A value of each type name fumarole checks, as a Python expression over ``{v}``.
_TYPE_TESTS = {
    "int": "(isinstance({v}, int) and not isinstance({v}, bool) and -9223372036854775808 <= {v} < 9223372036854775808)",
    "bool": "isinstance({v}, bool)",
    "map": "isinstance({v}, dict)",
    "list": "isinstance({v}, list)",
    "scalar": "(type({v}) is str or isinstance({v}, _SCALAR))",
    "time": "_is_time({v})",
    "number": "((isinstance({v}, int) and not isinstance({v}, bool) and -9223372036854775808 <= {v} < "
              "9223372036854775808) or (type({v}) is float and {v} - {v} == 0))",
}


class _Source:
    """Lines of a function being written, and fresh local names."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def local(self) -> str:
        self.count += 1
        return f"v{self.count}"

    def add(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)


def _typed_lines(out: _Source, var: str, tree: dict, indent: int, is_dict: bool = True) -> None:
    """Lines that return False when a value under ``var`` has the wrong type (``tree`` as
    kube's typed-field trees: segment -> [type name or None, subtree]; "*" is every item of a
    list or value of a mapping; a null value of a named field is unset).  ``is_dict``: ``var``
    is known to be a mapping (the object itself, or a value just checked to be one)."""
    for segment, (type_name, subtree) in tree.items():
        item = out.local()
        if segment == "*":
            items = f"{var}.values()" if is_dict else (f"({var} if isinstance({var}, list) else "
                                                       f"{var}.values() if isinstance({var}, dict) else ())")
            out.add(indent, f"for {item} in {items}:")
        else:
            lookup = f"{var}.get({segment!r})"
            out.add(indent, f"{item} = {lookup}" if is_dict else f"{item} = {lookup} if isinstance({var}, dict) else None")
            out.add(indent, f"if {item} is not None:")
        body = indent + 1
        if type_name is not None:
            out.add(body, f"if not {_TYPE_TESTS[type_name].format(v=item)}:")
            out.add(body + 1, "return False")
        if subtree:
            _typed_lines(out, item, subtree, body, type_name == "map")
        elif type_name is None:
            out.add(body, "pass")


def _compiled(name: str, out: _Source, namespace: dict) -> Predicate:
    source = f"def {name}(v0):\n" + "\n".join(out.lines) + "\n    return True\n"
    exec(compile(source, f"<{name}>", "exec"), namespace)  # noqa: S102 - source generated from fixed tables
    return namespace[name]


def all_typed(tree: dict, is_time: Callable[[Any], bool]) -> Predicate:
    """A predicate: every value the tree names has its type (the generic walk would find nothing)."""
    out = _Source()
    _typed_lines(out, "v0", tree, 1)
    namespace = {"_SCALAR": (str, int, float, _dt.date), "_is_time": is_time}
    return _compiled("all_typed", out, namespace)


def _known_tree(schema: tuple[tuple[tuple[str, ...], frozenset[str]], ...]) -> dict:
    """known_fields' (path, names) pairs as a tree: step -> [names or None, subtree]."""
    root: dict = {}
    for path, names in schema:
        node: list = [None, root]
        for step in path:
            node = node[1].setdefault(step, [None, {}])
        if not path:
            root.setdefault("", [None, {}])[0] = names
        else:
            node[0] = names
    return root


def _known_lines(out: _Source, var: str, tree: dict, indent: int, constants: dict) -> None:
    for step, (names, subtree) in tree.items():
        if step == "":
            constants[f"K{len(constants)}"] = names
            out.add(indent, f"if isinstance({var}, dict) and not {var}.keys() <= K{len(constants) - 1}:")
            out.add(indent + 1, "return False")
            continue
        item = out.local()
        if step == "[]":
            out.add(indent, f"for {item} in ({var} if isinstance({var}, list) else ()):")
        else:
            out.add(indent, f"{item} = {var}.get({step!r}) if isinstance({var}, dict) else None")
            out.add(indent, f"if {item} is not None:")
        if names is not None:
            constants[f"K{len(constants)}"] = names
            out.add(indent + 1, f"if isinstance({item}, dict) and not {item}.keys() <= K{len(constants) - 1}:")
            out.add(indent + 2, "return False")
        if subtree:
            _known_lines(out, item, subtree, indent + 1, constants)
        elif names is None:
            out.add(indent + 1, "pass")


def all_known(schema: tuple[tuple[tuple[str, ...], frozenset[str]], ...]) -> Predicate:
    """A predicate: every key at the schema's paths is a field the API defines (no K103 to give).

    Keys that are not text are never reported, so a mapping with one is left to the generic walk.
    """
    out = _Source()
    constants: dict[str, Any] = {}
    _known_lines(out, "v0", _known_tree(schema), 1, constants)
    return _compiled("all_known", out, constants)

