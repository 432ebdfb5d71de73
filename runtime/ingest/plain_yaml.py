"""A YAML cluster read without positions, when nothing in it needs them.

The position-keeping loader (:mod:`.yamlpos`) records a line and column for
every key and item, checks anchors, merges and tags, and builds ``PosDict`` /
``PosList`` objects: on a 4 MB dump that is most of the load time, spent for
diagnostics that a clean cluster never emits.  This reader takes libyaml's
events the same way but builds plain dicts and lists and resolves each
distinct plain scalar once (a dump repeats the same keys and values
thousands of times).  Anchors and aliases are followed (an alias shares the
object its anchor names, as PyYAML's loader does), within the careful
loader's limits.  Whatever would need the careful loader's judgement -- a
tag, a merge key, a duplicate key, a collection as a key, nesting or aliases
past the limits, malformed YAML -- makes it give up (None), and
the caller reads the text again with positions, which stays the authority on
every diagnostic; so does a cluster that has anything to report.
"""

from __future__ import annotations

from typing import Any

import yaml

from fumarole.runtime.ingest.yamlpos import MAX_ALIAS_NODES, MAX_DEPTH, nesting_depth

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_STR_TAG = "tag:yaml.org,2002:str"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_RESOLVED_LIMIT = 100_000


class _GiveUp(Exception):
    """Something the position-keeping loader must judge."""


class _Scalars:
    """Plain scalars resolved and constructed by PyYAML's safe rules, each distinct text once
    (the values are immutable: text, numbers, booleans, null, timestamps)."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.known: dict[str, Any] = {}

    def plain(self, text: str) -> Any:
        known = self.known
        if text in known:
            return known[text]
        loader = self.loader
        tag = loader.resolve(yaml.ScalarNode, text, (True, False))
        if tag == _STR_TAG:
            value: Any = text
        else:
            constructor = loader.yaml_constructors.get(tag)
            if constructor is None or tag == _MERGE_TAG:
                raise _GiveUp
            try:
                value = constructor(loader, yaml.ScalarNode(tag, text))
            except Exception:  # noqa: BLE001 - any failure is for the careful loader to report
                raise _GiveUp from None
        if len(known) < _RESOLVED_LIMIT:
            known[text] = value
        return value


def plain_yaml(text: str) -> list[Any] | None:
    """The non-empty documents of a YAML text, if it holds nothing the careful loader must judge."""
    loader = _LOADER(text)
    try:
        return _documents(loader)
    except (_GiveUp, yaml.YAMLError, RecursionError):
        return None
    finally:
        loader.dispose()


def _documents(loader: Any) -> list[Any]:
    """The event loop, with the open collection (``parent``, whether it is a list, the key
    waiting for its value) in locals and the enclosing ones on a stack; anchors and aliases in
    :class:`_Anchors`, off the common path."""
    scalars = _Scalars(loader)
    known, plain = scalars.known, scalars.plain
    get_event = loader.get_event
    scalar_event, mapping_start, sequence_start = yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent
    mapping_end, sequence_end, alias_event = yaml.MappingEndEvent, yaml.SequenceEndEvent, yaml.AliasEvent
    document_end, stream_end = yaml.DocumentEndEvent, yaml.StreamEndEvent
    no_key = _GiveUp  # a marker no document holds
    docs: list[Any] = []
    root: Any = None
    parent: Any = None  # the open collection (None: at the top of a document)
    in_list, key = False, no_key
    stack: list[tuple[Any, bool, Any]] = []
    anchors = _Anchors()
    while True:
        event = get_event()
        kind = type(event)
        if kind is scalar_event:
            if event.tag is not None:
                raise _GiveUp
            value = event.value
            if event.implicit[0]:  # plain: resolved by its text, each distinct text once
                value = known[value] if value in known else plain(value)
            if event.anchor is not None:
                anchors.scalar(event.anchor, value)
            opens = False
        elif kind is mapping_start or kind is sequence_start:
            if event.tag is not None or len(stack) >= MAX_DEPTH:
                raise _GiveUp
            value = {} if kind is mapping_start else []
            if event.anchor is not None:
                anchors.open(event.anchor, value, len(stack), event.start_mark.index)
            opens = True
        elif kind is mapping_end or kind is sequence_end:
            if anchors.pending and anchors.pending[-1][0] == len(stack) - 1:
                anchors.close(event.end_mark.index)
            parent, in_list, key = stack.pop()
            continue
        elif kind is alias_event:
            value = anchors.alias(event.anchor, len(stack))
            opens = False
        elif kind is document_end:
            if root is not None:
                docs.append(root)
            root = None
            anchors = _Anchors()  # anchors name nodes of their own document
            continue
        elif kind is stream_end:
            return docs
        else:  # the stream's and a document's start
            continue
        if in_list:
            parent.append(value)
        elif parent is None:
            root = value
        elif key is no_key:
            if opens or type(value) in (dict, list) or value in parent:
                raise _GiveUp  # a collection as a key, or a duplicate key
            key = value
            continue
        else:
            parent[key] = value
            key = no_key
        if opens:
            stack.append((parent, in_list, no_key))
            parent, in_list, key = value, kind is sequence_start, no_key


class _Anchors:
    """A document's anchors, each the object it names (aliases share it, as PyYAML's loader does)
    and a bound on the nodes it stands for: its text's length plus what aliases inside it expand
    to.  Whatever the careful loader would refuse or judge -- an alias to an unknown anchor or to a
    collection still open, aliases expanding past its limit or nesting past the depth limit --
    gives up, so the careful loader reports it."""

    def __init__(self) -> None:
        self.named: dict[str, tuple[Any, int]] = {}  # anchor -> (object, nodes it stands for, at most)
        self.pending: list[tuple[int, str, Any, int, int]] = []  # open collections: depth, anchor, object, ...
        self.expanded = 0  # nodes the document's aliases stand for, at most

    def scalar(self, name: str, value: Any) -> None:
        self.named[name] = (value, 1)

    def open(self, name: str, value: Any, depth: int, start: int) -> None:
        self.named.pop(name, None)  # an alias inside it refers to a collection still open: given up
        self.pending.append((depth, name, value, start, self.expanded))

    def close(self, end: int) -> None:
        _depth, name, value, start, expanded_before = self.pending.pop()
        self.named[name] = (value, end - start + self.expanded - expanded_before)

    def alias(self, name: str, depth: int) -> Any:
        if name not in self.named:
            raise _GiveUp
        value, nodes = self.named[name]
        self.expanded += nodes
        if self.expanded > MAX_ALIAS_NODES or (type(value) in (dict, list) and depth + nesting_depth(value) > MAX_DEPTH):
            raise _GiveUp
        return value
