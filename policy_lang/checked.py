"""What checking a module gives the later stages: the checked module and its side tables.

The checker (``checker.py``) fills a :class:`CheckedModule` for each file; the compiler, the
batch forms, the language server and the compile cache read it.  The tables are keyed by the
nodes' ``nid``, and a node the checker left without an entry is a fumarole bug named with its
position (:class:`CheckerContractError`), never a default.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from . import ast as A
from .diagnostics import Diagnostic, Span
from .env import AttrInfo, FuncSig, HookSig
from .types import Type


@dataclass(frozen=True)
class Ref:
    """What a name refers to: kind is local/arg/state/const/def/global/dispatch/function.

    ``py`` is the Python expression of anything but a local; a local is named by the compile
    stage (``local_names.py``) from ``binding``, the ``nid`` of the node that declares it."""

    kind: str
    py: str
    type: Type
    sig: FuncSig | None = None
    module: str = ""
    binding: int = 0


@dataclass(frozen=True)
class CallInfo:
    """How to compile a call: kind is def/dispatch/function/method/builtin/container/value."""

    kind: str
    py: str = ""
    sig: FuncSig | None = None
    name: str = ""


@dataclass
class HookInfo:
    decl: A.HookDef
    name: str
    sig: HookSig
    key_form: bool  # order hooks written as `order by`


_Entry = TypeVar("_Entry")  # what a side table holds per node


@dataclass
class CheckedModule:
    module: A.Module
    diagnostics: list[Diagnostic] = field(default_factory=list)
    types: dict[int, Type] = field(default_factory=dict)
    refs: dict[int, Ref] = field(default_factory=dict)
    attrs: dict[int, AttrInfo] = field(default_factory=dict)
    calls: dict[int, CallInfo] = field(default_factory=dict)
    bindings: dict[int, str] = field(default_factory=dict)  # declaring node (nid) -> the local's policy name, in order
    hooks: list[HookInfo] = field(default_factory=list)
    defs: dict[str, A.FuncDef] = field(default_factory=dict)
    def_types: dict[str, Type] = field(default_factory=dict)
    args: dict[str, A.ArgDecl] = field(default_factory=dict)
    states: dict[str, Type] = field(default_factory=dict)
    process_states: tuple[str, ...] = ()  # the states declared `process state`, in order
    consts: dict[str, A.ConstDecl] = field(default_factory=dict)
    uses: list["CheckedModule"] = field(default_factory=list)
    assigned_states: dict[int, set[str]] = field(default_factory=dict)  # function node (nid) -> states assigned
    arg_types: dict[str, Type] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)

    # The side tables as later stages read them: keyed by the nodes' ``nid``, and a node the
    # checker left without an entry is a fumarole bug named with its position, never a default.
    def type_of(self, node: A.Node) -> Type:
        return self._entry(self.types, node, "type")

    def ref_of(self, node: A.Name) -> Ref:
        return self._entry(self.refs, node, "name resolution")

    def attr_of(self, node: A.Node) -> AttrInfo:
        return self._entry(self.attrs, node, "attribute")

    def call_of(self, node: A.Call) -> CallInfo:
        return self._entry(self.calls, node, "call")

    def _entry(self, table: dict[int, _Entry], node: A.Node | Span, what: str) -> _Entry:
        found = table.get(node.nid)
        if found is None:
            span = node if isinstance(node, Span) else node.span
            raise CheckerContractError(f"{self.module.file}:{span.line}:{span.col}: the checker left no {what} "
                                       f"for this {type(node).__name__}")
        return found


class CheckerContractError(AssertionError):
    """A later stage asked about a node the checker has no entry for: a fumarole bug (code is
    generated only from a module that checked, where every node it asks about has one)."""
