"""The language pipeline: the one ordered list of stages every caller drives policy text through.

    parse -> expand sugar -> resolve modules -> check -> compile -> batch forms

1. **parse** (``parser.py``): text to a syntax tree, or P diagnostics.
2. **expand sugar** (``victim_rules.py``): one-line victim rules become the loops they stand for,
   so what is checked and compiled is the long form.
3. **resolve modules**: the files' modules are put in dependency order (a module after every
   module it ``use``s, whatever order the files were given in); modules that use each other are
   E151.  Plugins and actions come after every module.
4. **check** (``checker.py``): names, types and signatures, each file over the modules before it.
5. **compile** (``compiler.py``): each file without errors as a Python syntax tree, the builder
   of its hooks.
6. **batch forms** (``vectorize.py``): the fast engine's forms of node rules, added to the
   builder of each plugin and action (runtime/framework/batch_forms.py says how they reach the
   session); then the builder becomes one code object.

Bundles (``runtime/bundles/library.py``), ``fumarole test``'s probes, the language server and the
compile cache's re-checking all call :func:`check_files` / :func:`check_module` /
:func:`compile_checked` rather than calling the stages themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Mapping

from . import ast as A
from . import declaration_errors
from .cancel import checkpoint
from .check_declarations import strongly_connected
from .checked import CheckedModule
from .checker import Checker
from .compiled import CompiledModule
from .diagnostics import Diagnostic, FumaroleError
from .env import Environment
from .parser import parse
from .victim_rules import expand as expand_victim_rules

if TYPE_CHECKING:  # the compiler and the batch forms load only when a cache miss compiles
    from .compiler import ProbeSite
    from .vectorize import Fallback

STAGES = ("parse", "expand sugar", "resolve modules", "check", "compile", "batch forms")


@dataclass
class CheckedFiles:
    """What checking a set of policy files gave."""

    checked: list[CheckedModule]  # the files that parsed: modules in dependency order, then the rest
    modules: dict[str, CheckedModule]  # every module by name, the base's included
    diagnostics: list[Diagnostic]
    sources: dict[str, str]  # file -> text of the files given


def parse_files(files: Iterable[tuple[str, str]]) -> tuple[list[A.Module], list[Diagnostic], dict[str, str]]:
    """Stage 1 for each (name, text): the trees of the files that parse, every P diagnostic, the texts."""
    parsed: list[A.Module] = []
    diagnostics: list[Diagnostic] = []
    sources: dict[str, str] = {}
    for file, text in files:
        checkpoint()
        sources[file] = text
        try:
            parsed.append(parse(text, file))
        except FumaroleError as err:
            diagnostics.extend(err.diagnostics)
    return parsed, diagnostics, sources


def check_module(env: Environment, module: A.Module,
                 modules: Mapping[str, CheckedModule] | None = None) -> CheckedModule:
    """Stages 2 and 4 for one parsed file over the modules it may use."""
    expanded, sugar_problems = expand_victim_rules(module, env)
    checked = Checker(env, expanded, dict(modules or {})).check()
    checked.diagnostics[:0] = sugar_problems
    return checked


def module_order(modules: list[A.Module]) -> tuple[list[A.Module], list[Diagnostic]]:
    """Stage 3: ``modules`` so that each comes after the modules (among them) it uses, else in the
    order given; an E151 at each ``use`` within a group of modules that use each other."""
    by_name: dict[str, A.Module] = {}
    for module in modules:
        by_name.setdefault(module.name, module)
    uses = {name: [d.name for d in m.decls if isinstance(d, A.Use) and d.name in by_name]
            for name, m in by_name.items()}
    diagnostics: list[Diagnostic] = []
    for component in strongly_connected(uses):
        members = set(component)
        if len(members) == 1 and component[0] not in uses[component[0]]:
            continue
        for name in sorted(members):
            for decl in by_name[name].decls:
                if isinstance(decl, A.Use) and decl.name in members:
                    diagnostics.append(declaration_errors.modules_use_each_other(
                        by_name[name].file, decl.span, name, decl.name, sorted(members - {name, decl.name})))
    ordered: list[A.Module] = []
    placed: set[str] = set()
    for module in modules:
        if module.name not in placed and by_name[module.name] is module:
            _place_iteratively(module.name, uses, placed, ordered, by_name)
    rest = [m for m in modules if by_name[m.name] is not m]  # a second module of one name (E130)
    return ordered + rest, diagnostics


def _place_iteratively(root: str, uses: dict[str, list[str]], placed: set[str], ordered: list[A.Module],
                       by_name: dict[str, A.Module]) -> None:
    """Depth first from ``root``, each module placed after the ones it uses (cycles broken where
    they close), without recursion: any number of modules."""
    stack = [(root, 0)]
    on_path = {root}
    while stack:
        name, index = stack.pop()
        if index < len(uses[name]):
            stack.append((name, index + 1))
            used = uses[name][index]
            if used not in placed and used not in on_path:
                on_path.add(used)
                stack.append((used, 0))
            continue
        on_path.discard(name)
        placed.add(name)
        ordered.append(by_name[name])


def check_files(env: Environment, files: Iterable[tuple[str, str]],
                base_modules: Mapping[str, CheckedModule] | None = None) -> CheckedFiles:
    """Stages 1 to 4 for a set of files over the modules of a base: every diagnostic of every file."""
    parsed, diagnostics, sources = parse_files(files)
    modules: dict[str, CheckedModule] = dict(base_modules or {})
    by_name: dict[tuple[str, str], str] = {}
    for module in parsed:
        key = (module.kind, module.name)
        if key in by_name:
            diagnostics.append(declaration_errors.file_defined_twice(module.file, module.span, module.kind,
                                                                     module.name, by_name[key]))
        by_name[key] = module.file
    ordered, cycles = module_order([m for m in parsed if m.kind == "module"])
    diagnostics.extend(cycles)
    cyclic = {(d.file, d.span) for d in cycles}
    for module in ordered:
        checkpoint()
        checked = check_module(env, module, modules)
        # A `use` closing a cycle names a module not checked yet: its E151 says why, not E150.
        checked.diagnostics[:] = [d for d in checked.diagnostics if d.code != "E150" or (d.file, d.span) not in cyclic]
        modules[module.name] = checked
        diagnostics.extend(checked.diagnostics)
    checked_modules = [modules[m.name] for m in ordered]  # a module defined twice: its last file
    rest = []
    for module in [m for m in parsed if m.kind != "module"]:
        checkpoint()
        checked = check_module(env, module, modules)
        rest.append(checked)
        diagnostics.extend(checked.diagnostics)
    return CheckedFiles(checked_modules + rest, modules, diagnostics, sources)


def compile_checked(checked: CheckedModule, probe: ProbeSite | None = None) -> CompiledModule:
    """Stages 5 and 6 for one file that checked without errors (instrumented, and then without
    batch forms, when given a ``probe``)."""
    from .compiler import lower_module  # only a cache miss compiles
    from .vectorize import batch_forms

    compiler = lower_module(checked, probe)
    fallbacks: list[Fallback] = []
    if compiler.takes_batch_forms:
        statements, fallbacks = batch_forms(compiler)
        compiler.add(statements)
    return compiler.assemble(fallbacks)
