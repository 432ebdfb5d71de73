"""Declarations and whole-module checks: ``use``, arguments (their types, keys and defaults),
state, constants and definitions' signatures, names declared twice or taken from the session
or a used module; then, once every body is checked, recursion, the order constants are
evaluated in, and unused arguments, constants and definitions.
"""

from __future__ import annotations

from . import ast as A
from . import declaration_errors
from .check_core import Scope
from .check_hooks import BodyChecks
from .diagnostics import Span
from .types import Type, fn_of

ARG_TYPES = ("int", "float", "bool", "string", "duration", "quantity")
# What a `process state` may hold: JSON scalars, so the state can be shown and restated.
PROCESS_STATE_TYPES = frozenset({"int", "float", "duration", "string", "bool"})


def _literal_default(e: A.Expr) -> bool:
    """A default the bundle reads without evaluating it (runtime/bundles/bundle.py): a literal, a
    negated number, or a list or map of those.  Anything else (a constant's name, ``not true``)
    would be read there as something it is not."""
    if isinstance(e, A.Literal):
        return True
    if isinstance(e, A.Unary):
        return e.op == "-" and isinstance(e.operand, A.Literal) and e.operand.kind in ("int", "float", "duration")
    if isinstance(e, A.ListLit):
        return all(_literal_default(item) for item in e.items)
    if isinstance(e, A.MapLit):
        return all(_literal_default(k) and _literal_default(v) for k, v in e.entries)
    return False


def _string_list(t: A.TypeExpr) -> bool:
    return t.name == "list" and len(t.args) == 1 and t.args[0].name == "string"


def _plain_arg_type(t: A.TypeExpr) -> bool:
    """A type one YAML value converts to: a scalar argument type or list[string]."""
    return (t.name in ARG_TYPES and not t.args) or _string_list(t)


def _strict_type(t: A.TypeExpr) -> bool:
    """A type `strict` decodes as mapstructure does: int, float, bool, string, list[string], or a
    map[string, T] of the scalars (not a duration: framework.Get gives no argument one)."""
    scalar = {"int", "float", "bool", "string"}
    if t.name == "map" and len(t.args) == 2:
        return t.args[0].name == "string" and t.args[1].name in scalar and not t.args[1].args
    return (t.name in scalar and not t.args) or _string_list(t)


def _asserted_type(decl: A.ArgDecl) -> bool:
    """What `asserted` models: a bare `v.(string)` of one key's value (a `string`, or a `duration` when
    the text goes on to time.ParseDuration, as tdm's evict period does), or of every key of a
    `from prefix` / `from containing` family (a map[string, string]), as tdm reads its zones."""
    t = decl.type
    if decl.family:
        return t.name == "map" and len(t.args) == 2 and t.args[1].name == "string" and not t.args[1].args
    return t.name in ("string", "duration") and not t.args and not decl.path


def _plain_map_type(t: A.TypeExpr) -> bool:
    """map[string, T] of a plain argument type: a YAML mapping of such values."""
    return t.name == "map" and len(t.args) == 2 and t.args[0].name == "string" and _plain_arg_type(t.args[1])


class DeclarationChecks(BodyChecks):
    """The module's top-level declarations, and what can be told only once all of it is checked."""

    def _declare_top(self, name: str, span: Span, seen: dict[str, Span]) -> bool:
        if name in seen:
            self.report(declaration_errors.already_defined(self.file, span, name, seen[name].line))
            return False
        seen[name] = span
        return True

    def _collect(self) -> None:
        seen: dict[str, Span] = {}
        for place, decl in enumerate(self.module.decls):
            if isinstance(decl, A.Use):
                used = self.modules.get(decl.name)
                if used is None:
                    self.report(declaration_errors.unknown_module(self.file, decl.span, decl.name,
                                                        self._hint(decl.name, self.modules)))
                else:
                    self.out.uses.append(used)
            elif isinstance(decl, A.ArgDecl):
                if self.module.kind == "module":
                    self.report(declaration_errors.module_declares(self.file, decl.span, "arguments"))
                if self._declare_top(decl.name, decl.span, seen):
                    self.out.args[decl.name] = decl
                    self.out.arg_types[decl.name] = self._check_arg(decl)
            elif isinstance(decl, A.StateDecl):
                if self.module.kind == "module":
                    self.report(declaration_errors.module_declares(self.file, decl.span, "state"))
                if self._declare_top(decl.name, decl.span, seen):
                    self.out.states[decl.name] = self.resolve_type(decl.type)
                    if decl.process:
                        self._check_process_state(decl, self.out.states[decl.name])
            elif isinstance(decl, A.ConstDecl):
                if self._declare_top(decl.name, decl.span, seen):
                    self.out.consts[decl.name] = decl
                    self.declared_at[decl.name] = place
            elif isinstance(decl, A.FuncDef):
                if self._declare_top(decl.name, decl.name_span, seen):
                    self.out.defs[decl.name] = decl
                    self.declared_at[decl.name] = place
                    params = [self.resolve_type(p.type) for p in decl.params]
                    self.out.def_types[decl.name] = fn_of(params, self.resolve_type(decl.returns))
        for name, span in seen.items():
            if name in self.env.dispatch or name in self.env.functions or name in self.env.globals:
                self.report(declaration_errors.session_name_redefined(self.file, span, name))
        for used in self.out.uses:
            for name in list(used.defs) + list(used.consts):
                if name in seen:
                    self.report(declaration_errors.defined_by_used_module(self.file, seen[name], name,
                                                                          used.module.name))

    def _check_process_state(self, decl: A.StateDecl, t: Type) -> None:
        """Process state outlives the session: only a plugin's, and only values a status page can show."""
        if self.module.kind != "plugin":
            self.report(declaration_errors.process_state_outside_plugin(self.file, decl.span, self.module.kind))
        elif t.name not in PROCESS_STATE_TYPES:
            self.report(declaration_errors.process_state_type(self.file, decl.type.span, decl.name, t))
        else:
            self.out.process_states += (decl.name,)

    def _check_arg(self, decl: A.ArgDecl) -> Type:
        t = decl.type
        declared = self.resolve_type(t)
        if decl.family:
            ok = t.name == "map" and len(t.args) == 2 and t.args[0].name == "string" and t.args[1].name in ARG_TYPES
            if not ok:
                self.report(declaration_errors.family_argument_type(self.file, t.span, decl.family, ARG_TYPES))
        elif None in decl.path:
            ok = decl.path.count(None) == 1 and t.name == "map" and len(t.args) == 2 \
                and t.args[0].name == "string" and (_plain_arg_type(t.args[1]) or _plain_map_type(t.args[1]))
            if not ok:
                self.report(declaration_errors.wildcard_argument_type(self.file, t.span, ARG_TYPES))
        elif not _plain_arg_type(t) and not _plain_map_type(t):
            self.report(declaration_errors.argument_type(self.file, t.span, ARG_TYPES, t.name))
        if decl.split is not None and not _string_list(t):
            self.report(declaration_errors.split_argument_type(self.file, t.span))
        if decl.split == "":
            self.report(declaration_errors.empty_separator(self.file, decl.span))
        if decl.strict and not _strict_type(t):
            self.report(declaration_errors.strict_argument_type(self.file, t.span))
        if decl.asserted and not _asserted_type(decl):
            self.report(declaration_errors.asserted_argument_type(self.file, t.span))
        if t.optional:
            self.report(declaration_errors.optional_argument(self.file, t.span))
        if decl.default is not None:
            if not _literal_default(decl.default):
                self.report(declaration_errors.default_not_literal(self.file, decl.default.span))
            else:
                got = self.expr(decl.default, Scope(), declared)
                self.expect(got, declared, decl.default.span, "argument default", decl.default)
                if t.name == "duration" and isinstance(decl.default, A.Literal) and decl.default.kind != "duration":
                    self.report(declaration_errors.duration_default_without_unit(self.file, decl.default.span))
        return declared

    def _check_const(self, decl: A.ConstDecl) -> None:
        declared = self.resolve_type(decl.type) if decl.type else None
        got = self.expr(decl.value, Scope(), declared)
        if declared is not None:
            self.expect(got, declared, decl.value.span, f"'{decl.name}'", decl.value)
            got = declared
        self.out.types[decl.nid] = got

    def _check_recursion(self) -> None:
        """One E132 per group of definitions that call each other (a strongly connected component
        of the call graph, found in linear time), at its first definition by name."""
        graph = {caller: sorted(c for c in callees if c in self.out.defs)
                 for caller, callees in self.call_graph.items() if caller in self.out.defs}
        for component in strongly_connected(graph):
            first = min(component)
            if len(component) == 1 and first not in graph.get(first, ()):
                continue
            cycle = _cycle_through(first, graph, set(component))
            self.report(declaration_errors.recursion(self.module.file, self.out.defs[first].name_span, cycle,
                                                         len(component) - len(cycle) + 1))

    def _check_evaluation_order(self) -> None:
        """Constants are evaluated once, in the order they are written, when the policy is loaded;
        definitions are made in that order too.  So everything a constant's value can reach --
        directly, or through the definitions and functions it uses -- must be written above it.
        One E134 per constant, at the use in its value that leads below it."""
        for name, decl in self.out.consts.items():
            place = self.declared_at[name]
            first_uses = self.reaches.get(name, {})
            for start, span in first_uses.items():
                if start in self.out.consts:
                    continue  # evaluated already (one written below got its E134 where it is used)
                path = self._reach_below(start, place)
                if path is not None:
                    below = path[-1]
                    kind = "constant" if below in self.out.consts else "definition"
                    line = (self.out.consts[below].span if below in self.out.consts
                            else self.out.defs[below].name_span).line
                    self.report(declaration_errors.reaches_below(self.module.file, span, name, kind, below,
                                                                     path[:-1], line))
                    break

    def _reach_below(self, start: str, place: int) -> list[str] | None:
        """A path of uses from ``start`` (a definition) to a constant or definition written at or
        below ``place``, through definitions only (a constant reached is already evaluated); None if
        there is none."""
        parents: dict[str, str | None] = {start: None}
        pending = [start]
        while pending:
            name = pending.pop()
            if self.declared_at[name] >= place:
                path = [name]
                while (parent := parents[path[-1]]) is not None:
                    path.append(parent)
                return path[::-1]
            if name in self.out.defs:
                for used in self.reaches.get(name, {}):
                    if used not in parents:
                        parents[used] = name
                        pending.append(used)
        return None

    def _check_unused(self) -> None:
        for name, decl in self.out.args.items():
            if name not in self.used_names and not name.startswith("_"):
                self.report(declaration_errors.unused_argument(self.file, decl.span, name))
        for name, func in self.out.defs.items():
            if name not in self.used_names and self.module.kind != "module":
                self.report(declaration_errors.unused_definition(self.file, func.name_span, name))
        for name, const in self.out.consts.items():
            if name not in self.used_names and self.module.kind != "module":
                self.report(declaration_errors.unused_definition(self.file, const.span, name))


def strongly_connected(graph: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of ``graph`` (iterative: any size, linear time)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            successors = graph.get(node, [])
            if child < len(successors):
                work.append((node, child + 1))
                succ = successors[child]
                if succ not in index:
                    work.append((succ, 0))
                elif succ in on_stack:
                    low[node] = min(low[node], index[succ])
                continue
            if work and work[-1][0] != node:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(component)
    return components


def _cycle_through(first: str, graph: dict[str, list[str]], component: set[str]) -> list[str]:
    """The shortest cycle from ``first`` back to itself inside its component (breadth first)."""
    parents: dict[str, str] = {}
    frontier = [first]
    while frontier:
        following = []
        for node in frontier:
            for succ in graph.get(node, []):
                if succ == first:
                    path = [node]
                    while path[-1] != first:
                        path.append(parents[path[-1]])
                    return [*path[::-1], first]
                if succ in component and succ not in parents:
                    parents[succ] = node
                    following.append(succ)
        frontier = following
    return [first, first]
