"""A YAML cluster read without positions, when nothing in it needs them.

The position-keeping loader (:mod:`.yamlpos`) records a line and column for
every key and item, checks anchors, merges and tags, and builds ``PosDict`` /
``PosList`` objects: on a 4 MB dump that is most of the load time, spent for
diagnostics that a clean cluster never emits.  This reader takes libyaml's
events the same way but builds plain dicts and lists and resolves each
distinct plain scalar once (a dump repeats the same keys and values
thousands of times).  Whatever would need the careful loader's judgement --
an anchor or alias, a tag, a merge key, a duplicate key, a collection as a
key, nesting past the limit, malformed YAML -- makes it give up (None), and
the caller reads the text again with positions, which stays the authority on
every diagnostic; so does a cluster that has anything to report.
"""

from __future__ import annotations

from typing import Any

import yaml

from fumarole.runtime.ingest.yamlpos import MAX_DEPTH

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
    waiting for its value) in locals and the enclosing ones on a stack."""
    scalars = _Scalars(loader)
    known, plain = scalars.known, scalars.plain
    get_event = loader.get_event
    scalar_event, mapping_start, sequence_start = yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent
    mapping_end, sequence_end = yaml.MappingEndEvent, yaml.SequenceEndEvent
    document_end, stream_end = yaml.DocumentEndEvent, yaml.StreamEndEvent
    no_key = _GiveUp  # a marker no document holds
    docs: list[Any] = []
    root: Any = None
    parent: Any = None  # the open collection (None: at the top of a document)
    in_list, key = False, no_key
    stack: list[tuple[Any, bool, Any]] = []
    while True:
        event = get_event()
        kind = type(event)
        if kind is scalar_event:
            if event.anchor is not None or event.tag is not None:
                raise _GiveUp
            value = event.value
            if event.implicit[0]:  # plain: resolved by its text, each distinct text once
                value = known[value] if value in known else plain(value)
            if in_list:
                parent.append(value)
            elif parent is None:
                root = value
            elif key is no_key:
                if value in parent:
                    raise _GiveUp  # a duplicate key
                key = value
            else:
                parent[key] = value
                key = no_key
        elif kind is mapping_start or kind is sequence_start:
            if event.anchor is not None or event.tag is not None or len(stack) >= MAX_DEPTH:
                raise _GiveUp
            value = {} if kind is mapping_start else []
            if in_list:
                parent.append(value)
            elif parent is None:
                root = value
            elif key is no_key:
                raise _GiveUp  # a collection as a key
            else:
                parent[key] = value
            stack.append((parent, in_list, no_key))
            parent, in_list, key = value, kind is sequence_start, no_key
        elif kind is mapping_end or kind is sequence_end:
            parent, in_list, key = stack.pop()
        elif kind is document_end:
            if root is not None:
                docs.append(root)
            root = None
        elif kind is stream_end:
            return docs
        elif kind is yaml.AliasEvent:
            raise _GiveUp
