"""Libraries: sets of policy files checked and compiled by the language driver, ready to instantiate.

A :class:`Library` is the standard library (``policies/volcano``) or a
bundle's own sources over it.  The stages themselves (parse, expand sugar,
resolve modules, check, compile, batch forms) belong to the language driver
(``policy_lang/driver.py``); this module only calls it, keeps what it gave in
the compile cache (``compile_cache.py``), and turns each compiled module into
the builder a session calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from fumarole.policy_lang.compiled import CompiledModule
from fumarole.policy_lang.diagnostics import Diagnostic, FumaroleError
from fumarole.runtime.bundles import compile_cache
from fumarole.runtime.bundles.environment import COMPILER_INPUTS, STDLIB, load_environment
from fumarole.runtime.framework.namespace import namespace
from fumarole.runtime.ingest.source import display_path

if TYPE_CHECKING:
    from fumarole.policy_lang.checker import CheckedModule


@dataclass(frozen=True)
class CompiledPolicy:
    """A compiled plugin or action: call :meth:`instantiate` once per session."""

    module: CompiledModule
    builder: Callable

    @property
    def name(self) -> str:
        return self.module.name

    def instantiate(self, session: Any, hooks: Any, args: Mapping[str, Any]) -> dict[str, Callable]:
        return self.builder(session, hooks, args)


@dataclass(frozen=True)
class Library:
    plugins: Mapping[str, CompiledPolicy]
    actions: Mapping[str, CompiledPolicy]
    modules: Mapping[str, CompiledPolicy]
    modules_by_filename: Mapping[str, CompiledModule]
    sources: Mapping[str, str]
    warnings: tuple[Diagnostic, ...] = ()
    checked: Mapping[str, CheckedModule] = field(default_factory=dict)
    cache_key: str = ""  # the compile cache's key of these sources ("" when not cached)


def policy_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.policy") if p.is_file())


@dataclass
class CheckedSources:
    """Policy files parsed and checked, modules first so that `use` resolves; never raises."""

    checked: list[CheckedModule]  # the files that parsed, modules first
    modules: dict[str, CheckedModule]  # every module by name, the base's included
    diagnostics: list[Diagnostic]
    sources: dict[str, str]  # file -> text of the files given


def check_sources(files: Iterable[tuple[str, str]],
                  base_modules: Mapping[str, CheckedModule] | None = None) -> CheckedSources:
    """Parse and check policy files (over the modules of a base); every diagnostic of every file.

    Shared by the loader (which compiles when there is no error) and ``fumarole
    check`` (which reports everything and compiles nothing); the stages are the language
    driver's (``policy_lang/driver.py``).
    """
    # The front end is imported only when something is parsed: never on a cache hit.
    from fumarole.policy_lang.driver import check_files

    result = check_files(load_environment(), files, base_modules)
    return CheckedSources(result.checked, result.modules, result.diagnostics, result.sources)


def check_sources_cached(files: Iterable[tuple[str, str]]) -> CheckedSources:
    """:func:`check_sources` of files over no base, read from the compile cache when it holds these
    exact files (names included: diagnostics name them) and stored there otherwise."""
    files = list(files)
    key = compile_cache.library_key(files, "", COMPILER_INPUTS)
    hit = compile_cache.read_checked(key) if key else None
    if hit is not None:
        checked = list(hit.checked)
        modules = {c.module.name: c for c in checked if c.module.kind == "module"}
        return CheckedSources(checked, modules, list(hit.diagnostics), dict(files))
    result = check_sources(files)
    if key:
        compile_cache.write_checked(key, compile_cache.CheckedFiles(tuple(result.checked),
                                                                    tuple(result.diagnostics)))
    return result


def compile_sources(files: Iterable[tuple[str, str]], base: Library | None = None, *, cached: bool = False) -> Library:
    """Parse, check and compile policy files; raise FumaroleError with every diagnostic of every file.

    ``cached``: read the result from the compile cache (``compile_cache.py``) when it holds these
    exact sources over this base, and store it there otherwise.
    """
    files = list(files)
    key = compile_cache.library_key(files, base.cache_key if base else "", COMPILER_INPUTS) \
        if cached and (base is None or base.cache_key) else None
    base_checked = base.checked if base else {}
    if key:
        hit = compile_cache.read_library(key, base_checked,
                                         recheck=lambda: _own_modules(check_sources(files, base_checked), base_checked))
        if hit is not None:
            return _library(hit, dict(files), base, key)
    result = check_sources(files, base_checked)
    errors = [d for d in result.diagnostics if d.severity == "error"]
    if errors:
        raise FumaroleError(result.diagnostics, {**(base.sources if base else {}), **result.sources})
    from fumarole.policy_lang.driver import compile_checked  # not needed on a cache hit

    own = compile_cache.CachedLibrary(tuple(compile_checked(checked) for checked in result.checked),
                                      _own_modules(result, base_checked),
                                      tuple(d for d in result.diagnostics if d.severity != "error"))
    if key:
        compile_cache.write_library(key, own, base_checked)
    return _library(own, result.sources, base, key or "")


def _own_modules(result: CheckedSources, base_checked: Mapping[str, CheckedModule]) -> dict[str, CheckedModule]:
    """The modules (kind ``module``) the checked files define, beyond the base's."""
    return {name: module for name, module in result.modules.items() if base_checked.get(name) is not module}


def _library(own: compile_cache.CachedLibrary, sources: Mapping[str, str], base: Library | None,
             key: str) -> Library:
    """A library of compiled modules over a base: each module's builder made by running its code."""
    plugins = dict(base.plugins) if base else {}
    actions = dict(base.actions) if base else {}
    module_builders = dict(base.modules) if base else {}
    by_filename = dict(base.modules_by_filename) if base else {}
    for compiled in own.compiled:
        scope = namespace()
        exec(compiled.code, scope)  # noqa: S102 - code generated by fumarole.policy_lang.compiler from checked policies
        policy = CompiledPolicy(compiled, scope["__build__"])
        {"plugin": plugins, "action": actions, "module": module_builders}[compiled.kind][compiled.name] = policy
        by_filename[compiled.filename] = compiled
    warnings = (tuple(base.warnings) if base else ()) + own.warnings
    checked = own.checked if base is None else \
        compile_cache.LazyModules(lambda: {**base.checked, **own.checked})  # decoded when first needed
    return Library(plugins, actions, module_builders, by_filename, {**(base.sources if base else {}), **sources},
                   warnings, checked, key)


def standard_library_sources() -> list[tuple[str, str]]:
    """The standard library's policy files: (name as shown in messages, text)."""
    return [(display_path(p), p.read_text()) for p in policy_files(STDLIB)]


@lru_cache(maxsize=1)
def standard_library() -> Library:
    return compile_sources(standard_library_sources(), cached=True)
