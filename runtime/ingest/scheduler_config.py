"""Volcano's scheduler configuration (``volcano-scheduler.conf``), read as Volcano reads it.

``actions`` is a comma-separated string; ``tiers`` a list of plugin lists; every
``enable...`` switch left out of a plugin entry is on, except ``enableHierarchy``
and ``enabledClusterOrder`` (``plugins.ApplyPluginConfDefaults``);
``configurations`` carries per-action arguments.  Unlike Volcano, a misspelt
switch or a switch that is not a boolean is an error, not silently ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from fumarole.policy_lang.diagnostics import (
    Diagnostic,
    FumaroleError,
    Span,
    did_you_mean,
)
from fumarole.runtime.ingest import config_errors
from fumarole.runtime.ingest.yaml_v2_scalars import resolve_plain
from fumarole.runtime.ingest.yamlpos import YamlError, key_position, load, position

SWITCHES = (
    "enableJobOrder", "enableTaskOrder", "enableQueueOrder", "enabledClusterOrder", "enableJobReady",
    "enableJobPipelined", "enableJobStarving", "enableJobEnqueued", "enablePredicate", "enableBestNode",
    "enableNodeOrder", "enablePreemptable", "enableReclaimable", "enablePreemptive", "enabledOverused",
    "enabledAllocatable", "enableTargetJob", "enableReservedNodes", "enabledVictim", "enabledHyperNodeOrder",
    "enabledHyperNodeGradient", "enabledSubJobReady", "enabledSubJobPipelined", "enabledSubJobOrder",
    "enableHierarchy",
)
OFF_BY_DEFAULT = frozenset({"enableHierarchy", "enabledClusterOrder"})


@dataclass(frozen=True)
class PluginEntry:
    """One plugin of a tier: its name, switches (all resolved) and raw arguments."""

    name: str
    switches: Mapping[str, bool]
    arguments: Mapping[str, Any] = field(default_factory=dict)
    pos: tuple[int, int] = (1, 1)

    def enabled(self, gate: str | Sequence[str] | None) -> bool:
        """Whether the hook a gate guards is on for this entry: no gate is always on, a list is any of them.

        A list exists because some Volcano dispatchers accept either switch
        (``SimulateAddTaskFn`` runs a plugin when enablePreemptable or
        enabledAllocatable is on).
        """
        if gate is None:
            return True
        if isinstance(gate, str):
            return self.switches.get(gate, False)
        return any(self.switches.get(g, False) for g in gate)


@dataclass(frozen=True)
class SchedulerConfig:
    actions: tuple[str, ...]
    tiers: tuple[tuple[PluginEntry, ...], ...]
    configurations: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    file: str = "<config>"
    action_pos: tuple[int, int] = (1, 1)
    configuration_pos: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    # The `metrics` block (type, address, interval...): Volcano's metrics configuration, as strings.
    metrics: Mapping[str, str] = field(default_factory=dict)
    metrics_pos: Mapping[str, tuple[int, int]] = field(default_factory=dict)  # each setting's value


def config_from_document(doc: Any, file: str = "<config>", defaults_on: bool = True) -> SchedulerConfig:
    """Read a parsed volcano-scheduler.conf; raises FumaroleError listing every problem."""
    config, diags = read_config(doc, file, defaults_on)
    if diags:
        raise FumaroleError(diags)
    return config


def read_config(doc: Any, file: str = "<config>",
                defaults_on: bool = True) -> tuple[SchedulerConfig, list[Diagnostic]]:
    """The configuration without its broken parts, and every problem found.

    ``fumarole check`` goes on from here to validate the parts that are fine
    (plugin names, arguments), so one run reports everything.
    """
    diags: list[Diagnostic] = []
    if not isinstance(doc, dict):
        return SchedulerConfig((), (), file=file), [
            config_errors.config_not_a_mapping(file, Span(*position(doc)))]
    known_top = ("actions", "tiers", "configurations", "metrics")
    for key in doc:
        if key not in known_top:
            diags.append(config_errors.unknown_config_key(file, Span(*key_position(doc, key)), key,
                                                          did_you_mean(str(key), known_top)))
    raw_actions = doc.get("actions", "")
    actions: tuple[str, ...] = ()
    if not isinstance(raw_actions, str):
        diags.append(config_errors.actions_not_a_string(file, Span(*position(doc, "actions"))))
    else:
        actions = tuple(a.strip() for a in raw_actions.split(",") if a.strip())
    tiers = []
    raw_tiers = doc.get("tiers") or []
    if not isinstance(raw_tiers, list):
        diags.append(config_errors.tiers_not_a_list(file, Span(*position(doc, "tiers"))))
        raw_tiers = []
    for tier in raw_tiers:
        if not isinstance(tier, dict) or not isinstance(tier.get("plugins") or [], list):
            diags.append(config_errors.tier_not_a_mapping(file, Span(*position(tier))))
            continue
        entries = []
        for plugin in tier.get("plugins") or []:
            entry = _plugin_entry(plugin, file, diags, defaults_on)
            if entry is not None:
                entries.append(entry)
        tiers.append(tuple(entries))
    configurations: dict[str, Mapping[str, Any]] = {}
    configuration_pos: dict[str, tuple[int, int]] = {}
    for conf in doc.get("configurations") or []:
        if not isinstance(conf, dict) or not isinstance(conf.get("name"), str):
            diags.append(config_errors.configuration_without_name(file, Span(*position(conf))))
            continue
        arguments = conf.get("arguments") or {}
        if not isinstance(arguments, dict):
            diags.append(config_errors.configuration_arguments_not_a_mapping(file, Span(*position(conf, "arguments"))))
            arguments = {}
        configurations[conf["name"]] = arguments
        configuration_pos[conf["name"]] = position(conf)
    metrics = doc.get("metrics") or {}
    if not isinstance(metrics, dict):
        diags.append(config_errors.metrics_not_a_mapping(file, Span(*position(doc, "metrics"))))
        metrics = {}
    scalars = {k: v for k, v in metrics.items() if not isinstance(v, (dict, list))}
    for key in (k for k in metrics if k not in scalars):
        diags.append(config_errors.metrics_value_not_a_scalar(file, Span(*position(metrics, key)), key))
    return SchedulerConfig(actions, tuple(tiers), configurations, file, position(doc, "actions"),
                           configuration_pos, {str(k): _go_string(v) for k, v in scalars.items()},
                           {str(k): position(metrics, k) for k in scalars}), diags


def _go_string(value: Any) -> str:
    """A metrics setting as Volcano's map[string]string holds it (YAML scalars as written)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _plugin_entry(plugin: Any, file: str, diags: list, defaults_on: bool) -> PluginEntry | None:
    if not isinstance(plugin, dict) or not isinstance(plugin.get("name"), str):
        diags.append(config_errors.plugin_without_name(file, Span(*position(plugin))))
        return None
    switches: dict[str, bool] = {s: defaults_on and s not in OFF_BY_DEFAULT for s in SWITCHES}
    for key, value in plugin.items():
        if key in ("name", "arguments"):
            continue
        if key not in SWITCHES:
            diags.append(config_errors.unknown_switch(file, Span(*key_position(plugin, key)), key, plugin['name'],
                                                      did_you_mean(str(key), SWITCHES)))
            continue
        if not isinstance(value, bool):
            diags.append(config_errors.switch_not_a_bool(file, Span(*position(plugin, key)), key, value))
            continue
        switches[key] = value
    arguments = plugin.get("arguments") or {}
    if not isinstance(arguments, dict):
        diags.append(config_errors.plugin_arguments_not_a_mapping(file, Span(*position(plugin, "arguments"))))
        arguments = {}
    return PluginEntry(plugin["name"], switches, arguments, position(plugin))


def load_config(text: str, file: str = "<config>") -> SchedulerConfig:
    try:
        doc = load(text, plain=resolve_plain)
    except YamlError as exc:
        raise FumaroleError([config_errors.malformed_config(file, Span(exc.line, exc.col), exc.message)],
                            {file: text}) from None
    try:
        return config_from_document(doc, file)
    except FumaroleError as err:
        err.sources.setdefault(file, text)
        raise
