"""YAML loading that remembers where every value came from.

Every error fumarole reports about a YAML file names ``file:line:col``.  PyYAML
throws positions away when it builds Python objects, so this loader builds
``PosDict`` / ``PosList`` instead: plain dicts and lists that also carry the
1-based line and column of each key and item.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, Iterator

import yaml
from fumarole.policy_lang.diagnostics import Diagnostic, FumaroleError, Span
from fumarole.runtime.api.quoting import clip
from fumarole.runtime.ingest.source import read_text


class PosDict(dict):
    """A dict with ``pos`` (its own position) and ``key_pos`` / ``value_pos`` per key."""

    __slots__ = ("pos", "key_pos", "value_pos")
    pos: Position
    key_pos: dict[Any, Position]
    value_pos: dict[Any, Position]


class PosList(list):
    """A list with ``pos`` (its own position) and ``item_pos`` per index."""

    __slots__ = ("pos", "item_pos")
    pos: Position
    item_pos: list[Position]


Position = tuple[int, int]
# Resolves an untagged plain scalar's text to its value, in place of PyYAML's resolver.
PlainResolver = Callable[[str], Any]


class YamlError(Exception):
    """Malformed YAML, with the position PyYAML reported."""

    def __init__(self, message: str, line: int, col: int) -> None:
        super().__init__(message)
        self.message, self.line, self.col = message, line, col


# Limits that keep a hostile document from crashing or stalling the process: libyaml's
# composer recurses in C (100,000 nested brackets overflow the C stack and kill the whole
# process), Python code walking the objects recurses too, and aliases can make a 1 KB
# document stand for billions of nodes ("billion laughs").  Kubernetes objects nest about
# 15 levels deep and kubectl never writes aliases, so both limits are far from real input.
MAX_DEPTH = 100
MAX_ALIAS_NODES = 100_000

_MAP_TAG = yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG
_SEQ_TAG = yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG
_STR_TAG = "tag:yaml.org,2002:str"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_INT_TAG = "tag:yaml.org,2002:int"
_DECIMAL_DIGITS = re.compile(r"[-+]?[0-9_]+", re.ASCII)

# libyaml's parser when PyYAML was built with it (several times faster than the pure-Python
# one); scalars are resolved and constructed by PyYAML's SafeLoader rules either way.
_BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _at(mark: Any) -> Position:
    return mark.line + 1, mark.column + 1


class _Frame:
    """One collection being built: its object, where it started, and (for a mapping) the key
    waiting for its value, the keys written explicitly and the ``<<`` merges to apply."""

    __slots__ = ("obj", "anchor", "nodes", "key", "key_mark", "merges")

    def __init__(self, obj: Any, anchor: str | None) -> None:
        self.obj, self.anchor, self.nodes = obj, anchor, 1
        self.key: Any = _NO_KEY
        self.key_mark: Any = None
        self.merges: list[PosDict] = []


_NO_KEY = object()


class _Builder:
    """Builds PosDict / PosList documents from libyaml's event stream, without recursion.

    Replaces PyYAML's compose-then-construct (both recursive) so that depth, alias expansion
    and duplicate keys are checked while the events arrive, with the position of the event at
    fault, and the process never overflows its stack whatever the input.
    """

    def __init__(self, text: str, loader: type = _BASE_LOADER, plain: PlainResolver | None = None) -> None:
        self.loader = loader(text)
        self.plain = plain
        self.stack: list[_Frame] = []
        self.anchors: dict[str, tuple[Any, int]] = {}  # anchor -> (object, nodes it stands for)
        self.open_anchors: set[str] = set()
        self.alias_nodes = 0
        self.root: Any = None
        self.document_mark: Any = None

    def documents(self) -> Iterator[Any]:
        loader = self.loader
        try:
            while True:
                event = loader.get_event()
                kind = type(event)
                if kind is yaml.ScalarEvent:
                    self._value(self._scalar(event), 1, event.start_mark, event.anchor)
                elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                    self._start(event, kind is yaml.MappingStartEvent)
                elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                    frame = self.stack.pop()
                    if frame.merges:
                        _apply_merges(frame.obj, frame.merges)
                    if frame.anchor is not None:
                        self.open_anchors.discard(frame.anchor)
                    self._value(frame.obj, frame.nodes, None, frame.anchor, finished=True)
                elif kind is yaml.AliasEvent:
                    self._alias(event)
                elif kind is yaml.DocumentStartEvent:
                    self.anchors, self.alias_nodes, self.root = {}, 0, None
                    self.document_mark = event.start_mark
                elif kind is yaml.DocumentEndEvent:
                    yield self.root
                elif kind is yaml.StreamEndEvent:
                    return
        finally:
            loader.dispose()

    # -- events ------------------------------------------------------------------------------
    def _start(self, event: Any, mapping: bool) -> None:
        if len(self.stack) >= MAX_DEPTH:
            raise YamlError(f"input nested deeper than {MAX_DEPTH} levels (fumarole's limit)", *_at(event.start_mark))
        tag = event.tag
        if tag not in (None, "!", _MAP_TAG if mapping else _SEQ_TAG):
            raise YamlError(f"malformed YAML: unsupported tag {tag!r} on a collection", *_at(event.start_mark))
        obj: PosDict | PosList
        if mapping:
            obj = PosDict()
            obj.key_pos, obj.value_pos = {}, {}
        else:
            obj = PosList()
            obj.item_pos = []
        obj.pos = _at(event.start_mark)
        self._place(obj, event.start_mark)
        if event.anchor is not None:
            self.open_anchors.add(event.anchor)
        self.stack.append(_Frame(obj, event.anchor))

    def _scalar(self, event: Any) -> Any:
        tag = event.tag
        if tag is None or tag == "!":
            if event.implicit[1] and not event.implicit[0]:  # quoted: always a string
                return event.value
            if self.plain is not None and tag is None and event.value != "<<":
                return self.plain(event.value)
            tag = self.loader.resolve(yaml.ScalarNode, event.value, event.implicit)
        if tag == _STR_TAG:
            return event.value
        if tag == _MERGE_TAG:
            return _MERGE
        node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
        constructor = self.loader.yaml_constructors.get(tag)
        if constructor is None:
            raise YamlError(f"malformed YAML: unsupported tag {tag!r}", *_at(event.start_mark))
        try:
            return constructor(self.loader, node)
        except ValueError as exc:
            if tag == _INT_TAG and _DECIMAL_DIGITS.fullmatch(event.value):
                # Longer than Python converts (4,300 digits): kept as text, which every reader
                # then judges as Kubernetes would (a quantity parses it, an int32 field refuses it).
                return event.value
            reason = getattr(exc, "problem", None) or str(exc)
            raise YamlError(f"malformed YAML: {clip(event.value, 40)!r} is not a valid {tag.rsplit(':', 1)[-1]}: "
                            f"{reason}", *_at(event.start_mark)) from None
        except (OverflowError, TypeError, yaml.YAMLError) as exc:
            reason = getattr(exc, "problem", None) or str(exc)
            raise YamlError(f"malformed YAML: {clip(event.value, 40)!r} is not a valid {tag.rsplit(':', 1)[-1]}: "
                            f"{reason}", *_at(event.start_mark)) from None

    def _alias(self, event: Any) -> None:
        anchor = event.anchor
        if anchor in self.open_anchors:
            raise YamlError(f"malformed YAML: alias *{anchor} refers to a collection that contains it",
                            *_at(event.start_mark))
        if anchor not in self.anchors:
            raise YamlError(f"malformed YAML: found undefined alias *{anchor}", *_at(event.start_mark))
        obj, nodes = self.anchors[anchor]
        self.alias_nodes += nodes
        if self.alias_nodes > MAX_ALIAS_NODES:
            raise YamlError(f"aliases expand to more than {MAX_ALIAS_NODES:,} nodes (fumarole's limit)",
                            *_at(event.start_mark))
        self._place(obj, event.start_mark)
        self._count(nodes)

    def _value(self, obj: Any, nodes: int, mark: Any, anchor: str | None, finished: bool = False) -> None:
        """A finished node: record its anchor, count it, and put it in its parent (already done
        for collections, which are placed when they start so that positions come in order)."""
        if anchor is not None:
            self.anchors[anchor] = (obj, nodes)
        if finished:
            self._count(nodes)
            return
        self._place(obj, mark)
        self._count(nodes)

    def _count(self, nodes: int) -> None:
        if self.stack:
            self.stack[-1].nodes += nodes

    def _place(self, obj: Any, mark: Any) -> None:
        if not self.stack:
            self.root = obj
            return
        frame = self.stack[-1]
        parent = frame.obj
        if isinstance(parent, PosList):
            parent.append(obj)
            parent.item_pos.append(_at(mark))
        elif frame.key is _NO_KEY:
            self._key(frame, obj, mark)
        else:
            key, frame.key = frame.key, _NO_KEY
            if key is _MERGE:
                frame.merges.extend(_merge_sources(obj, mark))
                return
            parent[key] = obj
            parent.key_pos[key] = _at(frame.key_mark)
            parent.value_pos[key] = _at(mark)

    @staticmethod
    def _key(frame: _Frame, key: Any, mark: Any) -> None:
        try:
            hash(key)
        except TypeError:
            raise YamlError("malformed YAML: a mapping key must be a scalar, not a collection", *_at(mark)) from None
        if key is not _MERGE and key in frame.obj:
            line, col = frame.obj.key_pos[key]
            raise YamlError(f"malformed YAML: duplicate key {key!r} (first at line {line}, column {col})", *_at(mark))
        frame.key, frame.key_mark = key, mark


class _Merge:
    """The ``<<`` merge key of a mapping."""

    def __repr__(self) -> str:
        return "'<<'"


_MERGE = _Merge()


def _merge_sources(value: Any, mark: Any) -> list[PosDict]:
    """The mappings a ``<<`` value names: one mapping, or a list of them (earlier ones win)."""
    sources = value if isinstance(value, list) else [value]
    if not all(isinstance(source, PosDict) for source in sources):
        raise YamlError("malformed YAML: a merge key (<<) needs a mapping or a list of mappings", *_at(mark))
    return list(sources)


def _apply_merges(target: PosDict, sources: list[PosDict]) -> None:
    """YAML merge keys: merged entries fill in only the keys the mapping does not set itself."""
    for source in sources:
        for key, value in source.items():
            if key not in target:
                target[key] = value
                target.key_pos[key] = source.key_pos[key]
                target.value_pos[key] = source.value_pos[key]


def _wrap(error: yaml.YAMLError, text: str, loader: type) -> YamlError:
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    problem = getattr(error, "problem", None) or str(error)
    if isinstance(error, yaml.reader.ReaderError):  # a character the reader refuses: no mark, an offset
        # libyaml counts the offset in UTF-8 bytes, PyYAML's Python reader in characters.
        at = error.position if loader is yaml.SafeLoader else \
            len(text.encode("utf-8")[:error.position].decode("utf-8", "ignore"))
        before = text[:at]
        line, col = before.count("\n") + 1, at - (before.rfind("\n") + 1) + 1
        problem = str(error).split("\n")[0]
    context = getattr(error, "context", None)
    message = f"malformed YAML: {problem}" + (f" ({context})" if context else "")
    return YamlError(message, line, col)


def _careful(text: str, read: Callable[[_Builder], Any], plain: PlainResolver | None) -> Any:
    """``read`` over the events of ``text``, libyaml's parser first.  libyaml's scanner looks up
    to 1,024 characters ahead for a key, and stops at its own nesting limit (1,000 in the libyaml
    of PyYAML 6.0.4 wheels) before this loader's shallower limit sees an event; PyYAML's Python
    parser has no such limit, so such a text is read again by it, and the depth reported where
    MAX_DEPTH is passed, as for any other document."""
    try:
        return read(_Builder(text, plain=plain))
    except yaml.YAMLError as error:
        if "nesting depth" not in str(getattr(error, "problem", "")) or _BASE_LOADER is yaml.SafeLoader:
            raise _wrap(error, text, _BASE_LOADER) from None
    try:
        return read(_Builder(text, yaml.SafeLoader, plain))
    except yaml.YAMLError as error:
        raise _wrap(error, text, yaml.SafeLoader) from None


def load_all(text: str) -> list[Any]:
    """Every document of a multi-document YAML text (empty documents dropped)."""
    return _careful(text, lambda builder: [doc for doc in builder.documents() if doc is not None], None)


def load(text: str, plain: PlainResolver | None = None) -> Any:
    """The one document of a YAML text (None when empty); a second document is an error.
    ``plain`` resolves untagged plain scalars where the reader being mirrored does not follow
    PyYAML's rules (a ``<<`` key stays a merge)."""
    def single(builder: _Builder) -> Any:
        docs = builder.documents()
        first = next(docs, None)
        for _second in docs:
            raise YamlError("malformed YAML: expected a single document, but found another",
                            *_at(builder.document_mark))
        return first
    return _careful(text, single, plain)


def nesting_depth(value: Any) -> int:
    """How deeply lists and mappings nest in ``value`` (a scalar is 0), walked without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is not None:
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in children)
    return deepest


def load_file(path: Path, yaml_code: str) -> tuple[Any, str]:
    """One YAML file's document and text; F001 when unreadable, ``yaml_code`` when malformed."""
    file = str(path)
    text = read_text(path, file)
    try:
        return load(text), text
    except YamlError as exc:
        raise FumaroleError([Diagnostic(yaml_code, exc.message, file, Span(exc.line, exc.col))],
                            {file: text}) from None


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
