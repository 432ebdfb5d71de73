"""What the checker knows about the world: the session schema and the hook catalogue.

The runtime declares its types, attributes, globals and library functions in
``runtime/schema.yaml`` and its hooks in ``policies/volcano/hooks.yaml``; this
module turns those declarations into signatures.  The language never imports
the runtime: the declarations are all it sees.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .types import Type, fn_of, parse_type

@dataclass(frozen=True)
class Param:
    name: str
    type: Type
    optional: bool = False


@dataclass(frozen=True)
class FuncSig:
    name: str
    params: tuple[Param, ...]
    returns: Type
    py: str
    doc: str = ""
    literal: str = ""  # the text format a string-literal first argument must have, checked where it is written
    sized: bool = False  # its work grows with its string arguments: each is charged a step per character

    @property
    def fn_type(self) -> Type:
        return fn_of([p.type for p in self.params], self.returns)


@dataclass(frozen=True)
class AttrInfo:
    name: str
    type: Type
    py: str
    writable: bool = False
    doc: str = ""


@dataclass
class TypeInfo:
    name: str
    params: tuple[str, ...] = ()
    attributes: dict[str, AttrInfo] = field(default_factory=dict)
    methods: dict[str, FuncSig] = field(default_factory=dict)
    doc: str = ""


@dataclass(frozen=True)
class HookSig:
    """A hook a plugin may implement.

    ``gate`` is the tier-entry switch that turns the hook on; a tuple means any
    of them (Volcano's simulate hooks run when enablePreemptable or
    enabledAllocatable is on); None means always on.
    """

    name: str
    params: tuple[Type, ...]
    kind: str
    gate: str | tuple[str, ...] | None


@dataclass
class Environment:
    enums: dict[str, tuple[str, ...]]
    types: dict[str, TypeInfo]
    globals: dict[str, AttrInfo]
    functions: dict[str, FuncSig]
    hooks: dict[str, HookSig]
    dispatch: dict[str, FuncSig]

    @property
    def enum_names(self) -> frozenset:
        return frozenset(self.enums)



_BUILTIN_TYPES = {"bool": 0, "int": 0, "float": 0, "string": 0, "duration": 0, "quantity": 0, "void": 0,
                  "list": 1, "map": 2, "fn": -1}


def builtin_type_arity(name: str) -> int | None:
    return _BUILTIN_TYPES.get(name)


def _param(text: str) -> Param:
    name, _, rest = text.partition(":")
    type_text, _, default = rest.partition("=")
    return Param(name.strip(), parse_type(type_text), bool(default.strip()))


def _sig(name: str, spec: dict, default_py: str) -> FuncSig:
    return FuncSig(name, tuple(_param(p) for p in spec.get("params", [])),
                   parse_type(str(spec.get("returns", "void"))), spec.get("py", default_py),
                   spec.get("doc", ""), spec.get("literal", ""), bool(spec.get("sized", False)))


def _attr(name: str, spec) -> AttrInfo:
    if isinstance(spec, str):
        spec = {"type": spec}
    return AttrInfo(name, parse_type(spec["type"]), spec.get("py", "{0}." + name),
                    bool(spec.get("writable")), spec.get("doc", ""))


def dispatch_signature(hook: HookSig, combine: str) -> Type:
    """What calling a dispatcher returns, given how it combines its plugins."""
    from .types import BOOL, FLOAT, INT, NODE, TASK, VOID, list_of, map_of

    if combine == "compare":
        return INT
    if combine in ("order", "any", "all", "tier-bound", "first-tier-all", "vote"):
        return BOOL
    if combine in ("intersect", "intersect-all", "veto", "union-first-nonempty-tier"):
        return list_of(TASK)
    if combine == "first-failure":
        return Type("FitError", (), True)
    if combine in ("sum", "sum-bound"):
        return FLOAT
    if combine == "sum-by-key":
        return map_of(Type("HyperNode") if hook.kind == "hyper-scores" else NODE, FLOAT).maybe()
    if combine == "first-answer":
        return list_of(list_of(Type("HyperNode")))
    if combine == "each":
        return VOID
    raise ValueError(f"unknown combinator {combine!r}")


def _gate(raw: str | list[str] | None) -> str | tuple[str, ...] | None:
    return tuple(raw) if isinstance(raw, list) else raw


def build_environment(schema: dict, hooks_doc: dict) -> Environment:
    """Environment from the parsed schema.yaml and hooks.yaml documents."""
    enums = {name: tuple(str(v) for v in values) for name, values in schema.get("enums", {}).items()}
    types: dict[str, TypeInfo] = {}
    for name, spec in schema.get("types", {}).items():
        info = TypeInfo(name, tuple(spec.get("params", [])), doc=spec.get("doc", ""))
        for attr_name, attr_spec in (spec.get("attributes") or {}).items():
            info.attributes[attr_name] = _attr(attr_name, attr_spec)
        for meth_name, meth_spec in (spec.get("methods") or {}).items():
            info.methods[meth_name] = _sig(meth_name, meth_spec, meth_name)
        types[name] = info
    globals_ = {name: _attr(name, spec) for name, spec in schema.get("globals", {}).items()}
    functions = {name: _sig(name, spec, name) for name, spec in schema.get("functions", {}).items()}
    hooks = {name: HookSig(name, tuple(parse_type(p) for p in spec["params"]), spec["kind"], _gate(spec.get("gate")))
             for name, spec in hooks_doc.get("hooks", {}).items()}
    dispatch = {}
    for name, spec in hooks_doc.get("dispatch", {}).items():
        hook = hooks[spec["hook"]]
        params = tuple(Param(f"arg{i}", t) for i, t in enumerate(hook.params))
        dispatch[name] = FuncSig(name, params, dispatch_signature(hook, spec["combine"]), f"_H.{name}")
    return Environment(enums, types, globals_, functions, hooks, dispatch)
