"""YAML loading that remembers where every value came from.

Every error fumarole reports about a YAML file names ``file:line:col``.  PyYAML
throws positions away when it builds Python objects, so this loader builds
``PosDict`` / ``PosList`` instead: plain dicts and lists that also carry the
1-based line and column of each key and item.
"""

from __future__ import annotations

from typing import Any, Iterator

import yaml


class PosDict(dict):
    """A dict with ``pos`` (its own position) and ``key_pos`` / ``value_pos`` per key."""

    __slots__ = ("pos", "key_pos", "value_pos")


class PosList(list):
    """A list with ``pos`` (its own position) and ``item_pos`` per index."""

    __slots__ = ("pos", "item_pos")


Position = tuple[int, int]


class YamlError(Exception):
    """Malformed YAML, with the position PyYAML reported."""

    def __init__(self, message: str, line: int, col: int) -> None:
        super().__init__(message)
        self.message, self.line, self.col = message, line, col


def _mark(node: yaml.Node) -> Position:
    return node.start_mark.line + 1, node.start_mark.column + 1


# libyaml's parser when PyYAML was built with it (several times faster); the
# constructors below are Python either way, so positions are the same.
_BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BASE_LOADER):
    def construct_mapping(self, node, deep=False):  # type: ignore[override]
        self.flatten_mapping(node)
        out = PosDict()
        out.pos, out.key_pos, out.value_pos = _mark(node), {}, {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    None, None, "found an unhashable key", key_node.start_mark) from None
            out[key] = self.construct_object(value_node, deep=True)
            out.key_pos[key] = _mark(key_node)
            out.value_pos[key] = _mark(value_node)
        return out

    def construct_sequence(self, node, deep=False):  # type: ignore[override]
        out = PosList(self.construct_object(child, deep=True) for child in node.value)
        out.pos = _mark(node)
        out.item_pos = [_mark(child) for child in node.value]
        return out


def _construct_map(loader: _Loader, node: yaml.MappingNode) -> PosDict:
    return loader.construct_mapping(node)


def _construct_seq(loader: _Loader, node: yaml.SequenceNode) -> PosList:
    return loader.construct_sequence(node)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_map)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_seq)


def _wrap(error: yaml.YAMLError) -> YamlError:
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    problem = getattr(error, "problem", None) or str(error)
    context = getattr(error, "context", None)
    message = f"malformed YAML: {problem}" + (f" ({context})" if context else "")
    return YamlError(message, line, col)


def load_all(text: str) -> list[Any]:
    """Every document of a multi-document YAML text (empty documents dropped)."""
    try:
        return [doc for doc in yaml.load_all(text, Loader=_Loader) if doc is not None]
    except yaml.YAMLError as error:
        raise _wrap(error) from None


def load(text: str) -> Any:
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as error:
        raise _wrap(error) from None


def position(container: Any, key: Any = None) -> Position:
    """Best-known position of ``container[key]`` (or of the container itself)."""
    if key is not None:
        if isinstance(container, PosDict) and key in container.value_pos:
            return container.value_pos[key]
        if isinstance(container, PosList) and isinstance(key, int) and key < len(container.item_pos):
            return container.item_pos[key]
    return getattr(container, "pos", (1, 1))


def key_position(container: Any, key: Any) -> Position:
    if isinstance(container, PosDict) and key in container.key_pos:
        return container.key_pos[key]
    return position(container)


def walk_path(doc: Any, path: Iterator[Any]) -> Position:
    """Position of the deepest existing element along a JSON-pointer-like path."""
    pos = position(doc)
    node = doc
    for part in path:
        if isinstance(node, dict) and part in node:
            pos = key_position(node, part)
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            pos = position(node, part)
            node = node[part]
        else:
            break
    return pos
