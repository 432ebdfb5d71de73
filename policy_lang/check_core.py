"""The checker's shared state: where it is in the module, what it found so far, how it reports.

Checking is split by stage job into a chain of classes, each a module named for its stage
(``check_names`` → ``check_types`` → ``check_calls`` → ``check_statements`` → ``check_hooks`` →
``check_declarations``, composed by ``checker.py``); each may call the stages before it.
:class:`CheckerCore` is the bottom of that chain: the module being checked, the tables being
filled (:class:`~fumarole.policy_lang.checked.CheckedModule`), the bookkeeping the stages share,
and the lexical scopes they pass down.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from . import ast as A
from .checked import CheckedModule
from .diagnostics import Diagnostic, Span, did_you_mean
from .env import Environment, HookSig
from .types import Type

# Expressions checked between two looks at whether the check was cancelled (policy_lang/cancel.py).
CHECKPOINT_EVERY = 256

# The did-you-mean hints one module gets; the errors after them come without one.
MAX_HINTS = 20


class Scope:
    """A lexical block: declared locals (each its type and binding, the ``nid`` of the node that
    declares it) and narrowed paths."""

    def __init__(self, parent: "Scope | None" = None) -> None:
        self.parent = parent
        self.vars: dict[str, tuple[Type, int]] = {}
        self.narrowed: dict[str, Type] = {}

    def lookup(self, name: str) -> tuple[Type, int] | None:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.vars:
                return scope.vars[name]
            scope = scope.parent
        return None

    def narrowed_type(self, path: str) -> Type | None:
        scope: Scope | None = self
        while scope is not None:
            if path in scope.narrowed:
                return scope.narrowed[path]
            if path.split(".", 1)[0] in scope.vars:
                return None
            scope = scope.parent
        return None


@dataclass
class Context:
    """Where we are: inside which hook / def, and what the body may do."""

    hook: HookSig | None = None
    returns: Type | None = None  # for defs
    in_loop: int = 0
    func_id: int = 0


def attribute_path(expr: A.Expr) -> str | None:
    """``a.b.c`` for a name or a chain of attributes of one (narrowing keys on it), else None."""
    if isinstance(expr, A.Name):
        return expr.id
    if isinstance(expr, A.Attr):
        base = attribute_path(expr.obj)
        return f"{base}.{expr.name}" if base else None
    return None


class CheckerCore:
    """The state every stage of the check reads and writes, and how problems are reported."""

    def __init__(self, env: Environment, module: A.Module, modules: dict[str, CheckedModule] | None = None) -> None:
        self.env = env
        self.module = module
        self.modules = modules or {}
        self.out = CheckedModule(module)
        self.call_graph: dict[str, set[str]] = {}
        self.current_def: str | None = None
        self.current_const: tuple[str, int] | None = None  # the constant whose value is checked, its place
        self.declared_at: dict[str, int] = {}  # this module's constants and definitions -> place in the file
        self.reaches: dict[str, dict[str, Span]] = {}  # constant or def -> module names its body uses (first use)
        self.ctx = Context()
        self.used_names: set[str] = set()
        self.hints_left = MAX_HINTS
        self.until_checkpoint = CHECKPOINT_EVERY

    @property
    def file(self) -> str:
        return self.module.file

    def report(self, diagnostic: Diagnostic) -> None:
        """Record a problem, made by its constructor (declaration_errors, statement_errors,
        type_errors) from the facts found here."""
        self.out.diagnostics.append(diagnostic)

    def _hint(self, name: str, candidates: Iterable[str]) -> str | None:
        """A did-you-mean hint while the module's hint budget lasts (MAX_HINTS): a policy with
        thousands of unknown names is checked in time proportional to its size."""
        if self.hints_left <= 0:
            return None
        self.hints_left -= 1
        return did_you_mean(name, candidates)
