"""Bundles: a library of compiled policies wired by a validated configuration, immutable afterwards.

A :class:`Bundle` is what a session runs: a :class:`~.library.Library` (the
standard library in ``policies/volcano`` plus a bundle's own sources), the
action pipeline, plugin tiers with typed arguments (``arguments.py``), and how
each session function combines its plugins (the hook catalogue,
``environment.py``).  A bundle comes from a ``volcano-scheduler.conf`` or from
a bundle folder's manifest (``manifest.py``); this module wires those parts and
checks them against each other.  Sessions hold a reference to one Bundle;
nothing in it changes after loading, so swapping bundles is swapping one
reference.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from fumarole.policy_lang.compiled import CompiledModule
from fumarole.policy_lang.diagnostics import Diagnostic, FumaroleError, Span, did_you_mean
from fumarole.runtime.bundles import bundle_errors
from fumarole.runtime.bundles.arguments import argument_error, convert_argument, expected_type, resolve_arguments
from fumarole.runtime.bundles.environment import STDLIB, hooks_document
from fumarole.runtime.bundles.library import CompiledPolicy, Library, compile_sources, standard_library
from fumarole.runtime.bundles.manifest import (
    MANIFEST,
    manifest_config_document,
    manifest_scheduler_options,
    manifest_sources,
    read_manifest,
)
from fumarole.runtime.bundles.refusals import panicking_thresholds, refused_arguments, refused_tiers
from fumarole.runtime.framework.dispatch import COMBINATORS
from fumarole.runtime.framework.go_semantics import parse_duration
from fumarole.runtime.ingest.scheduler_config import (
    PluginEntry,
    SchedulerConfig,
    config_from_document,
    load_config,
)
from fumarole.runtime.ingest.scheduler_options import DEFAULT_OPTIONS, SchedulerOptions
from fumarole.runtime.ingest.source import display_path, read_text
from fumarole.runtime.ingest import config_errors
from fumarole.runtime.ingest.yamlpos import key_position, position


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
    # What loaded but Volcano would only log (C010 unknown argument, C012 value kept at its default);
    # not in the digest: the configuration's text already is.
    warnings: tuple[Diagnostic, ...] = ()

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
    h.update(json.dumps(_text_keys(wiring), sort_keys=True, default=str).encode())
    return "sha256:" + h.hexdigest()


def _text_keys(value: Any) -> Any:
    """``value`` with every mapping key a string, so the digest can sort them: a YAML key that is not
    a string (``7: x`` in a label set, which Volcano's readers skip) is written with its type, apart
    from the string "7"; string keys, and so the digests of every other configuration, are unchanged."""
    if isinstance(value, Mapping):
        return {k if isinstance(k, str) else f"{type(k).__name__}:{k!r}": _text_keys(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_text_keys(v) for v in value]
    return value


def _unknown_plugin(entry: PluginEntry, library: Library, file: str) -> Diagnostic:
    """C021: every plugin Volcano registers is in the standard library, so any other is unknown."""
    return config_errors.unknown_plugin(file, Span(*entry.pos), entry.name, did_you_mean(entry.name, library.plugins),
                                        library.plugins)


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
            diags.append(bundle_errors.veto_not_listed(file, Span(*position(named, index)), name,
                                                       did_you_mean(str(name), listed)))
    return [str(name) for name in named]


def build_bundle(config: SchedulerConfig, library: Library | None = None, name: str = "volcano",
                 revision: str = "", hook_overrides: Mapping[str, Mapping[str, str]] | None = None,
                 overrides_file: str = "", scheduler_options: SchedulerOptions = DEFAULT_OPTIONS,
                 loaded: bool = True) -> Bundle:
    """Validate a configuration against a library and resolve it into a Bundle.

    ``loaded`` says the configuration reaches the session through Volcano's configuration loader
    (a volcano-scheduler.conf, a bundle); False for the tiers a scenario's inline ``scheduler``
    block hands the session directly, as upstream's tests hand them to ``OpenSession``: the
    loader's own refusals (``refusals.refused_tiers``) then do not apply.
    """
    library = library or standard_library()
    hooks_doc = hooks_document()
    file = config.file
    diags: list[Diagnostic] = []
    for action in config.actions:
        if action not in library.actions:
            diags.append(config_errors.unknown_action(file, Span(*config.action_pos), action,
                                                      did_you_mean(action, library.actions), library.actions))
    tiers = []
    for tier in config.tiers:
        entries = []
        for entry in tier:
            plugin = library.plugins.get(entry.name)
            if plugin is None:
                diags.append(_unknown_plugin(entry, library, file))
                continue
            args, arg_diags = resolve_arguments(plugin, entry.arguments, file, entry.pos, f"plugin '{entry.name}'")
            # a threshold Volcano panics on in every session: the reader's warning there becomes the error
            panics = {(d.span.line, d.span.col): d for d in panicking_thresholds(entry, args, config.actions, file)}
            diags.extend(panics.pop((d.span.line, d.span.col), d) for d in arg_diags)
            diags.extend(panics.values())
            refused = refused_arguments(entry, _by_key(plugin, args), entry.arguments, file)
            if refused is not None:
                diags.append(refused)
            entries.append(replace(entry, arguments=args))
        tiers.append(tuple(entries))
    if loaded:
        diags.extend(refused_tiers(config.tiers, file))
    interval = config.metrics.get("interval")
    if interval is not None and not (parse_duration(interval) or 0) > 0:
        diags.append(config_errors.metrics_interval_default_kept(file, Span(*config.metrics_pos.get("interval", (1, 1))),
                                                                 interval))
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
            diags.append(config_errors.configuration_of_unknown_action(
                file, Span(*config.configuration_pos.get(conf_name, (1, 1))), conf_name,
                did_you_mean(conf_name, library.actions)))
    dispatch = {name: dict(spec) for name, spec in hooks_doc["dispatch"].items()}
    hook_kinds = {name: spec["kind"] for name, spec in hooks_doc["hooks"].items()}
    for function, override in (hook_overrides or {}).items():
        if function not in dispatch:
            diags.append(bundle_errors.unknown_session_function(overrides_file or file,
                                                                Span(*key_position(hook_overrides, function)),
                                                                function, did_you_mean(function, dispatch)))
            continue
        combine = override.get("combine")
        kind = hook_kinds[dispatch[function]["hook"]]
        if combine not in COMBINATORS:
            diags.append(bundle_errors.unknown_combinator(overrides_file or file, Span(*position(override, "combine")),
                                                          combine, function, did_you_mean(str(combine), COMBINATORS)))
        elif kind not in COMBINATORS[combine][1]:
            diags.append(bundle_errors.combinator_kind(overrides_file or file, Span(*position(override, "combine")),
                                                       combine, function, kind))
        elif combine in ("tier-bound", "sum-bound") and "bounds" not in dispatch[function]:
            diags.append(bundle_errors.bounds_nothing(overrides_file or file, Span(*position(override, "combine")),
                                                      combine, function))
        else:
            dispatch[function] = {**dispatch[function], **override}
            if combine == "veto":
                dispatch[function]["vetoes"] = _veto_plugins(override, config, library, overrides_file or file, diags)
    if any(d.severity == "error" for d in diags):
        raise FumaroleError(diags)
    gates = {name: spec.get("gate") for name, spec in hooks_doc["hooks"].items()}
    digest = _digest(library.sources, config, hook_overrides or {}, scheduler_options)
    return Bundle(name, revision, digest, library, config, tuple(tiers), dispatch, gates, action_arguments,
                  scheduler_options, tuple(diags))


def default_config() -> SchedulerConfig:
    path = STDLIB / "volcano-scheduler.conf"
    return load_config(path.read_text(), display_path(path))


@lru_cache(maxsize=1)
def default_bundle() -> Bundle:
    return build_bundle(default_config())


def bundle_from_volcano_conf(path: Path) -> Bundle:
    return bundle_from_conf_text(read_text(path), display_path(path))


def bundle_from_conf_text(text: str, file: str) -> Bundle:
    """A volcano-scheduler.conf's text (a file's, or a live cluster's ConfigMap's) over the standard library."""
    try:
        return build_bundle(load_config(text, file))
    except FumaroleError as err:
        err.sources.setdefault(file, text)
        raise


def override_arguments(bundle: Bundle, raw: Mapping[str, Any]) -> tuple[Bundle, set[str]]:
    """The bundle with plugin arguments set by their configuration key (``minRuntime: 1h``) on every
    tier entry whose plugin declares that key, and the keys it declared; raises FumaroleError (C012)
    for a value of the wrong type."""
    used: set[str] = set()
    tiers = []
    for tier in bundle.tiers:
        entries = []
        for entry in tier:
            declared = {decl.key or name: (name, decl) for name, decl in bundle.plugins[entry.name].module.args.items()
                        if not decl.family and not decl.path}
            arguments = dict(entry.arguments)
            for key, value in raw.items():
                if key in declared:
                    name, decl = declared[key]
                    ok, converted = convert_argument(value, decl.type.name, decl.split, decl.strict)
                    if not ok:
                        raise FumaroleError([argument_error(raw, key, value, expected_type(decl.type.name, decl.split),
                                                            bundle.config.file, f"plugin '{entry.name}'")])
                    arguments[name] = converted
                    used.add(key)
            refused = refused_arguments(entry, _by_key(bundle.plugins[entry.name], arguments), raw, bundle.config.file)
            if refused is not None:
                raise FumaroleError([refused])
            entries.append(replace(entry, arguments=arguments))
        tiers.append(tuple(entries))
    return replace(bundle, tiers=tuple(tiers)), used


def _by_key(policy: CompiledPolicy, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A plugin's resolved arguments by their configuration key (``deviceshare.VGPUEnable``)."""
    return {decl.key or name: arguments[name] for name, decl in policy.module.args.items() if name in arguments}


def load_bundle_dir(folder: Path, cached: bool = False) -> Bundle:
    """Load a bundle folder (``bundle.yaml`` plus its sources) into a Bundle, or raise with every problem.

    ``cached``: keep its compiled policies in the compile cache (not for archives, which compile in
    a fresh temporary folder each time and may come from anyone: see loader.compile_archive).
    """
    manifest_path = folder / MANIFEST if folder.is_dir() else folder
    doc, file, text = read_manifest(manifest_path)
    files, diags = manifest_sources(doc, manifest_path.parent, file)
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


def load_bundle(path: Path) -> Bundle:
    """A bundle folder, a bundle.yaml, or a volcano-scheduler.conf."""
    if path.is_dir() or path.name == MANIFEST:
        return load_bundle_dir(path, cached=True)
    return bundle_from_volcano_conf(path)
