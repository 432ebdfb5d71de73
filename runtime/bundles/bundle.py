"""Bundles: policy files compiled once, wired by validated YAML, immutable afterwards.

A :class:`Library` is a set of compiled policy files (the standard library in
``policies/volcano`` plus a bundle's own sources).  A :class:`Bundle` adds the
wiring: the action pipeline, plugin tiers with typed arguments, and how each
session function combines its plugins.  Sessions hold a reference to one
Bundle; nothing in it changes after loading, so swapping bundles is swapping
one reference.
"""

from __future__ import annotations

import copy
import glob
import hashlib
import json
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

import yaml
from fumarole.policy_lang.compiled import CompiledModule
from fumarole.policy_lang.diagnostics import (
    Diagnostic,
    FumaroleError,
    Span,
    did_you_mean,
)
from fumarole.policy_lang.durations import duration_seconds
from fumarole.runtime.bundles import compile_cache
from fumarole.runtime.framework.dispatch import COMBINATORS
from fumarole.runtime.framework.namespace import namespace
from fumarole.runtime.ingest.kube import parse_go_bool
from fumarole.runtime.ingest.scheduler_config import (
    PluginEntry,
    SchedulerConfig,
    config_from_document,
    load_config,
)
from fumarole.runtime.ingest.scheduler_options import (
    DEFAULT_OPTIONS,
    SchedulerOptions,
    read_options_block,
    with_overrides,
)
from fumarole.runtime.ingest.source import read_text
from fumarole.runtime.ingest.yamlpos import (
    YamlError,
    key_position,
    load,
    position,
    walk_path,
)

# The standard library and the schemas are package data, found the same way in a
# checkout, an editable install and a wheel.
STDLIB = Path(str(resources.files("fumarole.policies").joinpath("volcano")))
SCHEMA_FILE = Path(str(resources.files("fumarole.runtime").joinpath("schema.yaml")))
SCHEMAS = Path(str(resources.files("fumarole.runtime").joinpath("schemas")))
MANIFEST = "bundle.yaml"

if TYPE_CHECKING:
    import jsonschema

    from fumarole.policy_lang.checker import CheckedModule
    from fumarole.policy_lang.env import Environment
# Files besides the policy language's own that decide what compiling a policy gives.
_COMPILER_INPUTS = (SCHEMA_FILE, STDLIB / "hooks.yaml")


# -- environment -------------------------------------------------------------------

def _json_schema(name: str) -> dict:
    return json.loads((SCHEMAS / name).read_text())


def _validator(name: str) -> jsonschema.protocols.Validator:
    import jsonschema  # only when validating: a run over a cached library never needs it
    from referencing import Registry, Resource

    registry = Registry().with_resources(
        (schema["$id"].rsplit("/", 1)[-1], Resource.from_contents(schema))
        for schema in (_json_schema("hooks.schema.json"), _json_schema("bundle.schema.json")))
    schema = _json_schema(name)
    return jsonschema.Draft202012Validator(schema, registry=registry)


def schema_diagnostics(doc: Any, schema_name: str, file: str, code: str) -> list[Diagnostic]:
    """Every JSON Schema violation of a YAML document, at the YAML line and column of the offending key."""
    out = []
    for err in sorted(_validator(schema_name).iter_errors(doc), key=lambda e: list(map(str, e.absolute_path))):
        line, col = walk_path(doc, iter(err.absolute_path))
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        message = err.message
        if err.validator == "additionalProperties":
            extra = [k for k in (err.instance or {}) if k not in (err.schema.get("properties") or {})]
            if extra and isinstance(err.instance, dict):
                line, col = key_position(err.instance, extra[0])
                known = list((err.schema.get("properties") or {}).keys())
                out.append(Diagnostic(code, f"unknown key '{extra[0]}' at {where}", file, Span(line, col),
                                      hint=did_you_mean(extra[0], known)))
                continue
        hint = did_you_mean(err.instance, map(str, err.validator_value)) \
            if err.validator == "enum" and isinstance(err.instance, str) else None
        out.append(Diagnostic(code, f"{where}: {message}", file, Span(line, col), hint=hint))
    return out


@lru_cache(maxsize=1)
def load_environment() -> Environment:
    from fumarole.policy_lang.env import build_environment

    schema = yaml.load(SCHEMA_FILE.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    hooks_file = STDLIB / "hooks.yaml"
    hooks_doc = load(hooks_file.read_text())
    diags = schema_diagnostics(hooks_doc, "hooks.schema.json", str(hooks_file), "B001")
    if diags:
        raise FumaroleError(diags)
    return build_environment(schema, hooks_doc)


def hooks_document() -> dict:
    return load((STDLIB / "hooks.yaml").read_text())


# -- compiling policy files ----------------------------------------------------------

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


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


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
    key = compile_cache.library_key(files, "", _COMPILER_INPUTS)
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
    key = compile_cache.library_key(files, base.cache_key if base else "", _COMPILER_INPUTS) \
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
    return [(_display(p), p.read_text()) for p in policy_files(STDLIB)]


@lru_cache(maxsize=1)
def standard_library() -> Library:
    return compile_sources(standard_library_sources(), cached=True)


# -- arguments -------------------------------------------------------------------------

def _convert(value: Any, type_name: str) -> tuple[bool, Any]:
    if type_name == "int":
        return (isinstance(value, int) and not isinstance(value, bool)), value
    if type_name == "float":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return ok, float(value) if ok else value
    if type_name == "bool":
        parsed = parse_go_bool(value) if isinstance(value, (bool, str)) else None
        return parsed is not None, parsed
    if type_name == "string":
        ok = isinstance(value, (str, int, float)) and not isinstance(value, bool)
        return ok, str(value) if ok else value
    if type_name == "duration":
        if isinstance(value, str) and duration_seconds(value) > 0 or value in ("0", "0s"):
            return True, duration_seconds(value)
        return False, value
    if type_name == "list":
        if isinstance(value, str):
            return True, [v.strip() for v in value.split(",") if v.strip()]
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        return ok, list(value) if ok else value
    return False, value


def resolve_arguments(policy: CompiledPolicy, raw: Mapping[str, Any], file: str,
                      where: tuple[int, int], what: str) -> tuple[dict[str, Any], list[Diagnostic]]:
    """Typed arguments for one plugin or action entry; every problem becomes a diagnostic."""
    diags: list[Diagnostic] = []
    out: dict[str, Any] = {}
    used: set[str] = set()
    for name, decl in policy.module.args.items():
        type_expr = decl.type
        key = decl.key or name
        if decl.prefix:
            values = {}
            for raw_key, value in raw.items():
                if isinstance(raw_key, str) and raw_key.startswith(key):
                    used.add(raw_key)
                    ok, converted = _convert(value, type_expr.args[1].name)
                    if not ok:
                        diags.append(_arg_error(raw, raw_key, value, type_expr.args[1].name, file, what))
                    values[raw_key[len(key):]] = converted
            out[name] = values
            continue
        if decl.path:
            if key in raw:
                used.add(key)
            found, value = _follow_path(raw, key, decl.path, type_expr, file, what, diags)
            if found:
                out[name] = value
                continue
        elif key in raw:
            used.add(key)
            out[name] = _converted(raw, key, type_expr, file, what, diags)
            continue
        if decl.default is not None:
            out[name] = _literal_default(decl.default, type_expr.name)
        else:
            diags.append(Diagnostic("C011", f"{what} needs argument '{key}' ({type_expr.name})", file, Span(*where)))
    _unknown_fields(policy, raw, file, what, diags)
    for raw_key in raw:
        if raw_key not in used:
            known = [d.key or n for n, d in policy.module.args.items()]
            diags.append(Diagnostic("C010", f"{what} has no argument '{raw_key}'", file,
                                    Span(*key_position(raw, raw_key)), hint=did_you_mean(str(raw_key), known)))
    return out, list(dict.fromkeys(diags))  # several key paths through one bad mapping report it once


def override_arguments(bundle: "Bundle", raw: Mapping[str, Any]) -> tuple["Bundle", set[str]]:
    """The bundle with plugin arguments set by their configuration key (``minRuntime: 1h``) on every
    tier entry whose plugin declares that key, and the keys it declared; raises FumaroleError (C012)
    for a value of the wrong type."""
    used: set[str] = set()
    tiers = []
    for tier in bundle.tiers:
        entries = []
        for entry in tier:
            declared = {decl.key or name: (name, decl) for name, decl in bundle.plugins[entry.name].module.args.items()
                        if not decl.prefix and not decl.path}
            arguments = dict(entry.arguments)
            for key, value in raw.items():
                if key in declared:
                    name, decl = declared[key]
                    ok, converted = _convert(value, decl.type.name)
                    if not ok:
                        raise FumaroleError([_arg_error(raw, key, value, str(decl.type.name), bundle.config.file,
                                                        f"plugin '{entry.name}'")])
                    arguments[name] = converted
                    used.add(key)
            entries.append(replace(entry, arguments=arguments))
        tiers.append(tuple(entries))
    return replace(bundle, tiers=tuple(tiers)), used


def _converted(container: Mapping, key: Any, type_expr: Any, file: str, what: str,
               diags: list[Diagnostic], shown: str | None = None) -> Any:
    """``container[key]`` as an argument of the declared type; a diagnostic when it is not one.
    A ``map[string, T]`` argument reads a YAML mapping, each value a T."""
    value = container[key]
    if type_expr.name == "map":
        if not isinstance(value, Mapping):
            diags.append(_arg_error(container, key, value, "mapping", file, what, shown))
            return {}
        inner = type_expr.args[1]
        return {str(k): _converted(value, k, inner, file, what, diags, f"{shown or key}/{k}") for k in value}
    ok, converted = _convert(value, type_expr.name)
    if not ok:
        diags.append(_arg_error(container, key, value, str(type_expr.name), file, what, shown))
    return converted


def _follow_path(raw: Mapping, key: str, path: tuple[str | None, ...], type_expr: Any, file: str, what: str,
                 diags: list[Diagnostic]) -> tuple[bool, Any]:
    """The value at a key path (``from "sra" / "weight"``, ``from "resources" / * / "type"``), as Go
    decodes a structure (mapstructure): a missing field leaves the argument's default, a field of a
    mapping that is not one is a configuration error; under ``*`` every entry of the mapping gives
    one map entry, and an entry missing the rest of the path gives the zero value (Go's zero field)."""
    node: Any = raw
    parent: Any = raw
    last: Any = key
    steps: list[Any] = [key, *path]
    shown = ""
    for index, step in enumerate(steps):
        if step is None and isinstance(node, list):
            return True, _each_entry(dict(_indexed(node)), steps[index + 1:], type_expr.args[1], file, what, diags,
                                     shown)
        if not isinstance(node, Mapping):
            expected = "mapping or a list" if step is None else "mapping"
            diags.append(_arg_error(parent, last, node, expected, file, what, shown))
            return True, {} if type_expr.name == "map" else None
        if step is None:
            return True, _each_entry(node, steps[index + 1:], type_expr.args[1], file, what, diags, shown)
        step = step if index == 0 else _field(node, step)
        if step is None or step not in node:
            return False, None
        parent, last, node = node, step, node[step]
        shown = f"{shown}/{step}" if shown else str(step)
    return True, _converted(parent, last, type_expr, file, what, diags, shown)


def _each_entry(mapping: Mapping, rest: list[Any], type_expr: Any, file: str, what: str, diags: list[Diagnostic],
                shown: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for entry_key, entry in mapping.items():
        node, parent, last = entry, mapping, entry_key
        where = f"{shown}/{entry_key}"
        for step in rest:
            if not isinstance(node, Mapping):
                diags.append(_arg_error(parent, last, node, "mapping", file, what, where))
                node = None
                break
            step = _field(node, step)
            if step is None:
                node = None
                break
            parent, last, node = node, step, node[step]
            where = f"{where}/{step}"
        out[str(entry_key)] = copy.copy(_ZERO.get(type_expr.name, {})) if node is None else \
            _converted(parent, last, type_expr, file, what, diags, where)
    return out


def _indexed(items: list) -> Iterable[tuple[str, Any]]:
    """A list's entries keyed by their index ("0", "1", ...), for a `*` over a list."""
    return ((str(i), item) for i, item in enumerate(items))


def _field(mapping: Mapping, name: str) -> Any:
    """The key of a structure field in a mapping as mapstructure finds it: the exact name, else the
    first key equal to it ignoring case (`resourceweight` for `resourceWeight`); None if none."""
    if name in mapping:
        return name
    return next((k for k in mapping if isinstance(k, str) and k.casefold() == name.casefold()), None)


# Go's zero values, for a structure field the configuration leaves out.
_ZERO: dict[str, Any] = {"int": 0, "float": 0.0, "bool": False, "string": "", "duration": 0.0, "list": []}


def _unknown_fields(policy: "CompiledPolicy", raw: Mapping, file: str, what: str, diags: list[Diagnostic]) -> None:
    """C010 for a field of a structured argument no key path of the policy reads (``sra: {enabel: true}``):
    Go would ignore it silently, and the plugin would then run on its default."""
    tree: dict[Any, Any] = {}
    for name, decl in policy.module.args.items():
        if decl.path:
            node = tree.setdefault(decl.key or name, {})
            for step in decl.path[:-1]:
                node = node.setdefault(step, {})
            node.setdefault(decl.path[-1], {})
    for key, fields in tree.items():
        if key in raw:
            _check_fields(raw[key], fields, str(key), file, what, diags)


def _check_fields(value: Any, fields: dict[Any, Any], shown: str, file: str, what: str,
                  diags: list[Diagnostic]) -> None:
    if not fields or not isinstance(value, (Mapping, list)):
        return
    if None in fields:
        entries = _indexed(value) if isinstance(value, list) else value.items() if isinstance(value, Mapping) else ()
        for entry_key, entry in entries:
            _check_fields(entry, fields[None], f"{shown}/{entry_key}", file, what, diags)
        return
    if not isinstance(value, Mapping):
        return
    folded = {f.casefold(): f for f in fields}
    for field_key, field_value in value.items():
        matched = folded.get(field_key.casefold()) if isinstance(field_key, str) else None
        if matched is not None:
            _check_fields(field_value, fields[matched], f"{shown}/{field_key}", file, what, diags)
        else:
            diags.append(Diagnostic("C010", f"{what} has no argument '{shown}/{field_key}'", file,
                                    Span(*key_position(value, field_key)),
                                    hint=did_you_mean(str(field_key), [str(f) for f in fields])))


def _arg_error(raw: Mapping, key: str, value: Any, type_name: str, file: str, what: str,
               shown: str | None = None) -> Diagnostic:
    article = "an" if type_name[0] in "aeiou" else "a"
    return Diagnostic("C012", f"argument '{shown or key}' of {what} must be {article} {type_name}, not {value!r}", file,
                      Span(*position(raw, key)))


def _literal_default(expr, type_name: str) -> Any:
    from fumarole.policy_lang import ast as A

    if isinstance(expr, A.Literal):
        if type_name == "float" and expr.kind == "int" and isinstance(expr.value, int):  # an int literal's value is one
            return float(expr.value)
        return expr.value
    if isinstance(expr, A.Unary):
        return -_literal_default(expr.operand, type_name)
    if isinstance(expr, A.ListLit):
        return [_literal_default(i, "string") for i in expr.items]
    if isinstance(expr, A.MapLit):
        return {_literal_default(k, "string"): _literal_default(v, "string") for k, v in expr.entries}
    raise ValueError("argument defaults are literals")


# -- bundles -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Bundle:
    """Everything a session needs; immutable."""

    name: str
    revision: str
    digest: str
    library: Library
    config: SchedulerConfig
    tiers: tuple[tuple[PluginEntry, ...], ...]
    dispatch: Mapping[str, Mapping[str, str]]
    hook_gates: Mapping[str, str | list[str] | None]  # a list: any of the switches (PluginEntry.enabled)
    action_arguments: Mapping[str, Mapping[str, Any]]
    scheduler_options: SchedulerOptions = DEFAULT_OPTIONS  # the manifest's schedulerOptions

    @property
    def plugins(self) -> Mapping[str, CompiledPolicy]:
        return self.library.plugins

    @property
    def actions(self) -> Mapping[str, CompiledPolicy]:
        return self.library.actions

    @property
    def modules_by_filename(self) -> Mapping[str, CompiledModule]:
        return self.library.modules_by_filename


def _digest(sources: Mapping[str, str], config: SchedulerConfig, overrides: Mapping,
            options: SchedulerOptions = DEFAULT_OPTIONS) -> str:
    h = hashlib.sha256()
    for file in sorted(sources):
        h.update(file.encode() + b"\0" + sources[file].encode() + b"\0")
    wiring = {"actions": config.actions,
              "tiers": [[{"name": e.name, "switches": dict(e.switches), "arguments": dict(e.arguments)}
                         for e in tier] for tier in config.tiers],
              "configurations": {k: dict(v) for k, v in config.configurations.items()},
              "hooks": {k: dict(v) for k, v in overrides.items()}}
    if config.metrics:  # the usage plugin reads metrics.interval; without a block older digests stay
        wiring["metrics"] = dict(config.metrics)
    if options != DEFAULT_OPTIONS:  # options change decisions; the defaults keep older digests
        wiring["schedulerOptions"] = options.to_dict()
    h.update(json.dumps(wiring, sort_keys=True, default=str).encode())
    return "sha256:" + h.hexdigest()


def _unknown_plugin(entry: PluginEntry, library: Library, file: str) -> Diagnostic:
    """C021: every plugin Volcano registers is in the standard library, so any other is unknown."""
    return Diagnostic("C021", f"unknown plugin '{entry.name}'", file, Span(*entry.pos),
                      hint=did_you_mean(entry.name, library.plugins)
                      or f"available: {', '.join(sorted(library.plugins))}")


def _veto_plugins(override: Mapping[str, Any], config: SchedulerConfig, library: Library, file: str,
                  diags: list[Diagnostic]) -> list[str]:
    """The plugins a ``veto`` dispatcher lets veto: those ``vetoes`` names, each listed in the
    tiers (B013 otherwise), or by default every listed plugin the standard library does not
    define -- the bundle's own, while Volcano's plugins decide as Volcano does."""
    listed = [e.name for tier in config.tiers for e in tier]
    named = override.get("vetoes")
    if named is None:
        volcano = standard_library().plugins
        return [name for name in dict.fromkeys(listed) if name in library.plugins and name not in volcano]
    for index, name in enumerate(named):
        if name not in listed:
            diags.append(Diagnostic("B013", f"'{name}' vetoes but is not listed in the tiers", file,
                                    Span(*position(named, index)), hint=did_you_mean(str(name), listed)))
    return [str(name) for name in named]


def build_bundle(config: SchedulerConfig, library: Library | None = None, name: str = "volcano",
                 revision: str = "", hook_overrides: Mapping[str, Mapping[str, str]] | None = None,
                 overrides_file: str = "", scheduler_options: SchedulerOptions = DEFAULT_OPTIONS) -> Bundle:
    """Validate a configuration against a library and resolve it into a Bundle."""
    library = library or standard_library()
    hooks_doc = hooks_document()
    file = config.file
    diags: list[Diagnostic] = []
    for action in config.actions:
        if action not in library.actions:
            diags.append(Diagnostic("C020", f"unknown action '{action}'", file, Span(*config.action_pos),
                                    hint=did_you_mean(action, library.actions) or
                                    f"available: {', '.join(sorted(library.actions))}"))
    tiers = []
    for tier in config.tiers:
        entries = []
        for entry in tier:
            plugin = library.plugins.get(entry.name)
            if plugin is None:
                diags.append(_unknown_plugin(entry, library, file))
                continue
            args, arg_diags = resolve_arguments(plugin, entry.arguments, file, entry.pos, f"plugin '{entry.name}'")
            diags.extend(arg_diags)
            entries.append(replace(entry, arguments=args))
        tiers.append(tuple(entries))
    for tier in config.tiers:
        names = [e.name for e in tier]
        if "proportion" in names and any(e.name == "drf" and e.switches.get("enableHierarchy") for e in tier):
            diags.append(Diagnostic("C022", "proportion and drf with enableHierarchy cannot share a tier "
                                    "(Volcano rejects this configuration)", file, Span(*tier[0].pos)))
    action_arguments: dict[str, dict[str, Any]] = {}
    for action in config.actions:
        policy = library.actions.get(action)
        if policy is None:
            continue
        raw = config.configurations.get(action, {})
        args, arg_diags = resolve_arguments(policy, raw, file, config.configuration_pos.get(action, (1, 1)),
                                            f"action '{action}'")
        diags.extend(arg_diags)
        action_arguments[action] = args
    for conf_name in config.configurations:
        if conf_name not in library.actions:
            diags.append(Diagnostic("C020", f"configuration for unknown action '{conf_name}'", file,
                                    Span(*config.configuration_pos.get(conf_name, (1, 1))),
                                    hint=did_you_mean(conf_name, library.actions)))
    dispatch = {name: dict(spec) for name, spec in hooks_doc["dispatch"].items()}
    hook_kinds = {name: spec["kind"] for name, spec in hooks_doc["hooks"].items()}
    for function, override in (hook_overrides or {}).items():
        if function not in dispatch:
            diags.append(Diagnostic("B010", f"unknown session function '{function}' in hooks", overrides_file or file,
                                    Span(*key_position(hook_overrides, function)), hint=did_you_mean(function, dispatch)))
            continue
        combine = override.get("combine")
        kind = hook_kinds[dispatch[function]["hook"]]
        if combine not in COMBINATORS:
            diags.append(Diagnostic("B011", f"unknown combinator '{combine}' for '{function}'", overrides_file or file,
                                    Span(*position(override, "combine")), hint=did_you_mean(str(combine), COMBINATORS)))
        elif kind not in COMBINATORS[combine][1]:
            diags.append(Diagnostic("B012", f"combinator '{combine}' cannot combine '{function}' ({kind} hook)",
                                    overrides_file or file, Span(*position(override, "combine"))))
        else:
            dispatch[function] = {**dispatch[function], **override}
            if combine == "veto":
                dispatch[function]["vetoes"] = _veto_plugins(override, config, library, overrides_file or file, diags)
    if diags:
        raise FumaroleError(diags)
    gates = {name: spec.get("gate") for name, spec in hooks_doc["hooks"].items()}
    digest = _digest(library.sources, config, hook_overrides or {}, scheduler_options)
    return Bundle(name, revision, digest, library, config, tuple(tiers), dispatch, gates, action_arguments,
                  scheduler_options)


def default_config() -> SchedulerConfig:
    path = STDLIB / "volcano-scheduler.conf"
    return load_config(path.read_text(), _display(path))


@lru_cache(maxsize=1)
def default_bundle() -> Bundle:
    return build_bundle(default_config())


def bundle_from_volcano_conf(path: Path) -> Bundle:
    return bundle_from_conf_text(_read(path), _display(path))


def bundle_from_conf_text(text: str, file: str) -> Bundle:
    """A volcano-scheduler.conf's text (a file's, or a live cluster's ConfigMap's) over the standard library."""
    try:
        return build_bundle(load_config(text, file))
    except FumaroleError as err:
        err.sources.setdefault(file, text)
        raise


def _read(path: Path) -> str:
    return read_text(path, str(path))


def load_bundle_dir(folder: Path, cached: bool = False) -> Bundle:
    """Load a bundle folder (``bundle.yaml`` plus its sources) into a Bundle, or raise with every problem.

    ``cached``: keep its compiled policies in the compile cache (not for archives, which compile in
    a fresh temporary folder each time and may come from anyone: see loader.compile_archive).
    """
    manifest_path = folder / MANIFEST if folder.is_dir() else folder
    folder = manifest_path.parent
    file = _display(manifest_path)
    text = _read(manifest_path)
    try:
        doc = load(text)
    except YamlError as exc:
        raise FumaroleError([Diagnostic("B000", exc.message, file, Span(exc.line, exc.col))], {file: text}) from None
    diags = schema_diagnostics(doc, "bundle.schema.json", file, "B001") if isinstance(doc, dict) else \
        [Diagnostic("B001", "a bundle manifest must be a mapping", file)]
    if diags:
        raise FumaroleError(diags, {file: text})
    files, diags = manifest_sources(doc, folder, file)
    if diags:
        raise FumaroleError(diags, {file: text})
    base = standard_library() if "volcano" in (doc.get("uses") or ["volcano"]) else None
    library = compile_sources(files, base, cached=cached) if files else (base or compile_sources([]))
    try:
        config = config_from_document(manifest_config_document(doc), file)
    except FumaroleError as err:
        err.sources.setdefault(file, text)
        raise
    options, diags = manifest_scheduler_options(doc, file)
    if diags:
        raise FumaroleError(diags, {file: text})
    try:
        return build_bundle(config, library, doc["metadata"]["name"], str(doc["metadata"].get("revision", "")),
                            doc.get("hooks") or {}, file, options)
    except FumaroleError as err:
        err.sources.setdefault(file, text)
        raise


def manifest_sources(doc: Any, folder: Path, file: str) -> tuple[list[tuple[str, str]], list[Diagnostic]]:
    """The policy files (display name, text) a manifest's `sources` globs name; B002 for a glob matching none."""
    files: list[tuple[str, str]] = []
    diags: list[Diagnostic] = []
    for pattern in doc.get("sources") or []:
        matches = sorted(glob.glob(str(folder / pattern), recursive=True))
        if not matches:
            line, col = walk_path(doc, iter(["sources", doc["sources"].index(pattern)]))
            diags.append(Diagnostic("B002", f"source '{pattern}' matches no file", file, Span(line, col)))
        for match in matches:
            files.append((_display(Path(match)), _read(Path(match))))
    return files, diags


def manifest_scheduler_options(doc: Any, file: str) -> tuple[SchedulerOptions, list[Diagnostic]]:
    """The manifest's ``schedulerOptions`` over Volcano's defaults (the schema checked the types)."""
    if "schedulerOptions" not in doc:
        return DEFAULT_OPTIONS, []
    overrides, diags = read_options_block(doc["schedulerOptions"], file)
    return with_overrides(DEFAULT_OPTIONS, overrides), diags


def manifest_config_document(doc: Any) -> Any:
    """A manifest's wiring in the shape of a volcano-scheduler.conf, at the manifest's positions."""
    conf_doc = {"actions": doc.get("actions", "")}
    if isinstance(conf_doc["actions"], list):
        # Items that are not names were reported by the schema check; leave them out here.
        conf_doc["actions"] = ", ".join(a for a in conf_doc["actions"] if isinstance(a, str))
    conf_doc["tiers"] = doc.get("tiers") or []
    conf_doc["configurations"] = doc.get("configurations") or []
    return _with_positions(doc, conf_doc)


def _with_positions(doc: Any, conf: dict) -> Any:
    """Give the derived configuration document the manifest's positions."""
    from fumarole.runtime.ingest.yamlpos import PosDict

    out = PosDict(conf)
    out.pos = doc.pos
    out.key_pos = {k: doc.key_pos.get(k, doc.pos) for k in conf}
    out.value_pos = {k: doc.value_pos.get(k, doc.pos) for k in conf}
    return out


def load_bundle(path: Path) -> Bundle:
    """A bundle folder, a bundle.yaml, or a volcano-scheduler.conf."""
    if path.is_dir() or path.name == MANIFEST:
        return load_bundle_dir(path, cached=True)
    return bundle_from_volcano_conf(path)
