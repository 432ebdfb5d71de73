"""The Python names of a module's locals, chosen by the compile stage.

The checker records what each local *is* (``CheckedModule.bindings``: the node that declares
it, by ``nid``, and its name in the policy) and which binding each use of a name reads
(``Ref.binding``); the compiler and the batch forms ask this table for the identifier to emit.
A policy's local ``x`` becomes ``v_x``; a later binding of the same name in the same module (a
loop variable reused in a sibling block, a lambda's parameter) gets ``v_x_1``, ``v_x_2``... in
the order the checker met them, so every binding of a module has its own name, and the prefix
keeps every one of them away from Python's builtins and the runtime's names (docs/language.md,
"Safety").
"""

from __future__ import annotations

from . import ast as A
from .checked import CheckedModule, CheckerContractError, Ref
from .diagnostics import Span

LOCAL_PREFIX = "v_"


class LocalNames:
    """The identifier of each binding of one checked module."""

    def __init__(self, checked: CheckedModule) -> None:
        self._file = checked.module.file
        self._names: dict[int, str] = {}
        seen: dict[str, int] = {}
        for binding, name in checked.bindings.items():
            n = seen.get(name, 0)
            seen[name] = n + 1
            self._names[binding] = f"{LOCAL_PREFIX}{name}" if n == 0 else f"{LOCAL_PREFIX}{name}_{n}"

    def declared(self, declaring: A.Node | Span) -> str:
        """The identifier of the local ``declaring`` declares (a ``let``, a loop, a comprehension,
        a parameter: a span stands for a hook's or a lambda's parameter)."""
        found = self._names.get(declaring.nid)
        if found is None:
            span = declaring if isinstance(declaring, Span) else declaring.span
            raise CheckerContractError(f"{self._file}:{span.line}:{span.col}: the checker recorded no binding "
                                       f"for this {type(declaring).__name__}")
        return found

    def read(self, ref: Ref) -> str:
        """The identifier a use of a name reads: a local's binding's, else the checker's Python
        expression of the argument, state, constant, definition or session name it refers to."""
        if ref.kind != "local":
            return ref.py
        found = self._names.get(ref.binding)
        if found is None:
            raise CheckerContractError(f"{self._file}: a local refers to binding {ref.binding}, "
                                       "which the checker never recorded")
        return found
