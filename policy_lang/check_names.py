"""Name resolution: what each name refers to (a local, an argument, a constant, a definition
of this module or of a used one, a session global or function), the bindings of locals (their
Python names are the compile stage's: local_names.py), and the uses of module-level names the
evaluation-order check follows.
"""

from __future__ import annotations

import itertools
from typing import Iterator

from . import ast as A
from . import declaration_errors, type_errors
from .check_core import CheckerCore, Scope
from .checked import Ref
from .diagnostics import Span
from .types import UNKNOWN, Type

# The functions every policy can call, typed by the checker itself (not in the hook catalogue).
BUILTIN_FUNCTIONS = ("len", "max", "min", "range", "str", "int", "float", "sum")


class NameResolution(CheckerCore):
    """Scopes and names: declaring locals, resolving a name, hints for an unknown one."""

    def _declare_local(self, scope: Scope, name: str, t: Type, span: Span, node_id: int) -> None:
        """Bind ``name`` in ``scope`` to the local the node ``node_id`` declares."""
        if name in scope.vars:
            self.report(declaration_errors.declared_twice_in_block(self.file, span, name))
        elif scope.lookup(name) is not None or self._module_level(name):
            self.report(declaration_errors.shadows(self.file, span, name))
        scope.vars[name] = (t, node_id)
        self.out.bindings[node_id] = name

    def _module_level(self, name: str) -> bool:
        ref = self._top_level(name)
        return ref is not None and ref.kind in ("arg", "state", "const", "def")

    def _top_level(self, name: str) -> Ref | None:
        out = self.out
        if name in out.args:
            return Ref("arg", "a_" + name, out.arg_types[name])
        if name in out.states:
            return Ref("state", "s_" + name, out.states[name])
        if name in out.consts:
            return Ref("const", "c_" + name, self._own_const_type(name))
        if name in out.defs:
            return Ref("def", "f_" + name, out.def_types[name])
        for used in out.uses:
            if name in used.defs:
                return Ref("def", "f_" + name, used.def_types[name], module=used.module.name)
            if name in used.consts:
                return Ref("const", "c_" + name, used.type_of(used.consts[name]), module=used.module.name)
        env = self.env
        if name in env.globals:
            g = env.globals[name]
            return Ref("global", g.py, g.type)
        if name in env.dispatch:
            sig = env.dispatch[name]
            return Ref("dispatch", sig.py, sig.fn_type, sig)
        if name in env.functions:
            sig = env.functions[name]
            return Ref("function", sig.py, sig.fn_type, sig)
        return None

    def _own_const_type(self, name: str) -> Type:
        """The type of this module's constant ``name``: known once its value is checked.  Before
        that it can be read only from a constant's value at or above it, which _note_module_use
        reports (E134); any other read of it unchecked is a fumarole bug."""
        decl = self.out.consts[name]
        if decl.nid in self.out.types:
            return self.out.types[decl.nid]
        if self.current_const is not None and self.declared_at[name] >= self.current_const[1]:
            return UNKNOWN  # read before it is evaluated: the E134 reported where it is read
        return self.out.type_of(decl)  # raises CheckerContractError, naming the constant's position

    def _note_module_use(self, name: str, ref: Ref, span: Span) -> bool:
        """Record that the body being checked uses this module's constant or definition ``name``
        (the evaluation-order check follows these); False, with an E134, when a constant's value
        reads a constant that is not yet evaluated at that point (written at or below it)."""
        if ref.module or ref.kind not in ("const", "def") or name not in self.declared_at:
            return True
        owner = self.current_const[0] if self.current_const is not None else self.current_def
        if owner is not None:
            self.reaches.setdefault(owner, {}).setdefault(name, span)
        if self.current_const is None or ref.kind != "const" or self.declared_at[name] < self.current_const[1]:
            return True
        const, file = self.current_const[0], self.module.file
        self.report(declaration_errors.constant_in_own_value(file, span, name) if name == const else
                                    declaration_errors.constant_before_declaration(file, span, name,
                                                                       self.out.consts[name].span.line, const))
        return False

    def _all_names(self, scope: Scope) -> Iterator[str]:
        """Every name visible here, innermost first, made as the hint reads them (it reads only
        its first candidates: a large module's names are never all listed for one hint)."""
        s: Scope | None = scope
        while s is not None:
            yield from s.vars
            s = s.parent
        out = self.out
        yield from itertools.chain(out.args, out.states, out.consts, out.defs)
        for used in out.uses:
            yield from itertools.chain(used.defs, used.consts)
        yield from itertools.chain(self.env.globals, self.env.dispatch, self.env.functions, BUILTIN_FUNCTIONS)

    def _expr_Name(self, e: A.Name, scope: Scope, expected: Type | None) -> Type:
        self.used_names.add(e.id)
        found = scope.lookup(e.id)
        if found is not None:
            t, binding = found
            narrowed = scope.narrowed_type(e.id)
            self.out.refs[e.nid] = Ref("local", "", t, binding=binding)
            return narrowed or t
        ref = self._top_level(e.id)
        if ref is None:
            if e.id in BUILTIN_FUNCTIONS:
                self.report(type_errors.only_callable(self.file, e.span, e.id))
                return UNKNOWN
            self.report(type_errors.unknown_name(self.file, e.span, e.id, self._rule_only_hint(e.id)
                                                   or self._hint(e.id, self._all_names(scope))))
            return UNKNOWN
        if not self._note_module_use(e.id, ref, e.span):
            return UNKNOWN
        if ref.kind == "def" and self.current_def is not None:
            self.call_graph.setdefault(self.current_def, set()).add(e.id)
        self.out.refs[e.nid] = ref
        narrowed = scope.narrowed_type(e.id)
        return narrowed or ref.type

    def _rule_only_hint(self, name: str) -> str | None:
        """Names a one-line victim or candidate rule reads (policy_lang/victim_rules.py) that mean nothing
        elsewhere: `self`, and an enumeration value written bare (`status == Running`)."""
        if name == "self":
            return ("`self` (the task that needs room) exists only in one-line victim and candidate rules "
                    "(`victim when ...`); in a hook body use its parameter, e.g. `preemptor`")
        enums = [enum for enum, values in self.env.enums.items() if name in values]
        if enums:
            return (f"'{name}' is a {enums[0]} value: write the string \"{name}\"; a bare value is read only "
                    "in one-line victim and candidate rules")
        return None
