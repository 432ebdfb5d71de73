"""What the compiler gives, and the names generated code shares with the runtime.

Kept apart from the compiler (``compiler.py``) so that a process running policies compiled
earlier (read from the compile cache, runtime/bundles/compile_cache.py) imports neither the
checker nor the compiler.
"""

from __future__ import annotations

import ast as py
from dataclasses import dataclass, field
from types import CodeType
from typing import Callable

from . import ast as A
from .types import Type

# The key under which a plugin's builder also hands out a view of its state (never a hook name).
STATE_VIEW = "__state__"

# The prefix of a plugin hook's function: the budget finds the hook invocation a step belongs to by it.
PLUGIN_HOOK_PREFIX = "_hook_"
BATCH_HOOK_PREFIX = "_bh_"  # the batch form of a hook (policy_lang/vectorize.py)
ACTION_HOOK_PREFIX = "_action_"

# The builder entry of a plugin with process state: a function returning {name: value now},
# which the session saves when it closes (runtime/framework/process_state.py).
PROCESS_STATE_ENTRY = "__process_state__"

# The status a `fail` with a text message and no code of its own gives, by hook ("error" elsewhere).
_DEFAULT_FAIL_CODE = {"predicate": "unschedulable", "pre_predicate": "unresolvable", "job_valid": "invalid"}


def fail_code(fail: A.Fail, hook: str) -> str:
    """The status code of a `fail` with a text message in ``hook``: its own, else the hook's default.
    Any code but "unschedulable" ends the hook there (the compiler's and the batch forms' reading)."""
    return fail.code or _DEFAULT_FAIL_CODE.get(hook, "error")


@dataclass
class CompiledModule:
    """The product of compiling one checked module (plus the modules it uses)."""

    kind: str
    name: str
    file: str
    tree: py.Module | None = field(repr=False)  # None when read from the compile cache: see `syntax_tree`
    code: CodeType
    line_map: list[tuple[int, int]]
    hooks: tuple[str, ...]
    args: dict[str, A.ArgDecl] = field(default_factory=dict)
    arg_types: dict[str, Type] = field(default_factory=dict)
    batch_fallbacks: list = field(default_factory=list)  # node-level rules without a batch form (vectorize.Fallback)
    process_states: dict[str, Type] = field(default_factory=dict)  # `process state` names and types
    file_map: list[str] = field(default_factory=list)  # generated line -> policy file ("" for this module's)
    # Gives the tree of a module read from the compile cache (runtime/bundles/compile_cache.py),
    # which keeps trees apart: they are most of an entry and only readers of `source` need them.
    tree_loader: Callable[[], py.Module] | None = field(default=None, repr=False, compare=False)

    @property
    def filename(self) -> str:
        return f"<policy {self.file}>"

    @property
    def syntax_tree(self) -> py.Module:
        """The Python syntax tree the code object was compiled from."""
        if self.tree is None and self.tree_loader is not None:
            self.tree = self.tree_loader()
        assert self.tree is not None, "a compiled module keeps its tree or a way to load it"
        return self.tree

    @property
    def source(self) -> str:
        """The generated Python as text, for reading (rendered on demand: nothing compiles it)."""
        return py.unparse(self.syntax_tree)

    def policy_position(self, python_line: int) -> tuple[int, int]:
        """The policy (line, col) of a line number in this module's code object."""
        if 0 < python_line <= len(self.line_map):
            return self.line_map[python_line - 1]
        return (0, 0)

    def policy_file(self, python_line: int) -> str:
        """The policy file a generated line comes from: this module's, or that of a module it uses."""
        if 0 < python_line <= len(self.file_map):
            return self.file_map[python_line - 1] or self.file
        return self.file
