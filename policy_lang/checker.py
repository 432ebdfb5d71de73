"""The check stage: names, types, hook signatures and arguments, everything knowable before a session runs.

:class:`Checker` walks one module against an :class:`~fumarole.policy_lang.env.Environment`,
reports every problem it finds (it never stops at the first) and records, for the compiler,
the type of every expression and what every name refers to
(:class:`~fumarole.policy_lang.checked.CheckedModule`).

The work is split by stage job, one module each, in the order each builds on the one before:

- ``check_core.py``: the shared state (module, tables being filled, scopes) and reporting;
- ``check_names.py``: name resolution, scopes and the Python names of locals;
- ``check_types.py``: expression typing, expected types, narrowing of optional values;
- ``check_calls.py``: calls and their arguments;
- ``check_statements.py``: statements, assignment targets, what a block may do and whether it exits;
- ``check_hooks.py``: hook and definition bodies against their signatures;
- ``check_declarations.py``: top-level declarations (``use``, arguments, state, constants) and the
  whole-module checks (recursion, evaluation order, unused names).

Each stage is a class extending the one before it (a chain, not mixins): every call from one
stage into an earlier one is then an ordinary method that the type checker follows, with no
protocol restating the methods; the two dispatches by node type (``expr`` to ``_expr_Call``,
``stmt`` to ``_stmt_If``) stay dynamic, as they were.  This module composes the chain.
"""

from __future__ import annotations

from . import ast as A
from . import declaration_errors
from .check_declarations import DeclarationChecks
from .check_names import BUILTIN_FUNCTIONS
from .checked import CheckedModule

# What the runtime (the language server, bundles, authoring) imports from here.
__all__ = ["BUILTIN_FUNCTIONS", "CheckedModule", "Checker"]


class Checker(DeclarationChecks):
    """Checks one module: ``Checker(env, module, modules).check()``."""

    def check(self) -> CheckedModule:
        m = self.module
        if m.kind not in ("plugin", "action", "module"):
            self.report(declaration_errors.unknown_file_kind(self.file, m.span, m.kind))
        self._collect()
        for place, decl in enumerate(m.decls):
            if isinstance(decl, A.ConstDecl):
                self.current_const = (decl.name, place)
                self._check_const(decl)
                self.current_const = None
        for decl in m.decls:
            if isinstance(decl, A.FuncDef):
                self._check_def(decl)
            elif isinstance(decl, A.HookDef):
                self._check_hook(decl)
        self._check_bound_declarations()
        self._check_recursion()
        self._check_evaluation_order()
        self._check_unused()
        return self.out

