"""The Volcano scheduler binary's own options that change decisions (``cmd/scheduler/app/options``).

A site's Volcano is its ``volcano-scheduler.conf`` *and* the command line of
``vc-scheduler``.  The options below change what a session decides; fumarole
takes them, spelled as Volcano spells its flags, from ``fumarole run`` /
``fumarole serve`` flags and from a ``schedulerOptions`` block of a bundle
manifest or a scenario (the same names as keys).  Volcano options that do not
change decisions, or that fumarole does not model, are named in
:data:`NOT_MODELLED` with the reason, so they are refused with an explanation
instead of as unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Iterable, Mapping

from fumarole.policy_lang.diagnostics import Diagnostic, Span, did_you_mean
from fumarole.runtime.ingest.go_parse import INT32, parse_go_bool, parse_go_int32
from fumarole.runtime.ingest import config_errors
from fumarole.runtime.ingest.yamlpos import PosList, key_position, position


# Volcano's sharding modes (pkg/util: NoneShardingMode, HardShardingMode, SoftShardingMode).
NO_SHARDING, HARD_SHARDING, SOFT_SHARDING = "none", "hard", "soft"


@dataclass(frozen=True)
class SchedulerOptions:
    """Volcano's defaults; a field per modelled option (the flag name is in :data:`OPTIONS`)."""

    percentage_nodes_to_find: int = 0
    minimum_feasible_nodes: int = 100
    minimum_percentage_nodes_to_find: int = 5
    scheduler_names: tuple[str, ...] = ("volcano",)
    default_queue: str = "default"
    node_selector: tuple[str, ...] = ()
    priority_class: bool = True
    sharding_mode: str = "none"
    sharding_name: str = "volcano"

    @property
    def sharded(self) -> bool:
        """Whether the scheduler schedules by its NodeShard (hard or soft mode): only then does
        Volcano's cache watch NodeShards and fill the session's NodesInShard."""
        return self.sharding_mode in (HARD_SHARDING, SOFT_SHARDING)

    def node_selector_labels(self) -> frozenset[str]:
        """The ``name:value`` pairs a node must carry one of (SchedulerCache.updateNodeSelectors)."""
        labels = set()
        for entry in self.node_selector:
            name, _, value = entry.partition(":")
            labels.add(f"{name.strip()}:{value.strip()}")
        return frozenset(labels)

    def to_dict(self) -> dict[str, Any]:
        """The options by flag name, as ``/v1/status`` and ``--format json`` show them."""
        values = {option.field: option for option in OPTIONS.values()}
        return {values[f.name].flag: _plain(getattr(self, f.name)) for f in fields(self)}


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


@dataclass(frozen=True)
class Option:
    flag: str
    field: str
    kind: str  # int32 | string | names (StringArray) | labels (StringSlice) | bool
    doc: str
    # The only values a string option takes.  Volcano compares such a value with each and treats
    # any other as the first (none): a misspelt mode would silently mean no sharding, so it is refused.
    choices: tuple[str, ...] = ()


OPTIONS: dict[str, Option] = {o.flag: o for o in (
    Option("percentage-nodes-to-find", "percentage_nodes_to_find", "int32",
           "percentage of nodes to find feasible before the node scan stops; <= 0 adapts to the cluster size"),
    Option("minimum-feasible-nodes", "minimum_feasible_nodes", "int32",
           "clusters up to this many nodes are always scanned whole; the scan never stops below it"),
    Option("minimum-percentage-nodes-to-find", "minimum_percentage_nodes_to_find", "int32",
           "the least percentage the adaptive scan uses"),
    Option("scheduler-name", "scheduler_names", "names",
           "pods whose spec.schedulerName is one of these are scheduled (repeat the flag for several)"),
    Option("default-queue", "default_queue", "string",
           "the queue of a PodGroup that names none"),
    Option("node-selector", "node_selector", "labels",
           "only nodes carrying one of these name:value labels are scheduled onto (comma-separated or repeated)"),
    Option("priority-class", "priority_class", "bool",
           "false: PriorityClasses are not read, so every PodGroup has priority 0"),
    Option("scheduler-sharding-mode", "sharding_mode", "string",
           "none: every node; hard: only the nodes of the scheduler's NodeShard; soft: those first",
           choices=(NO_SHARDING, HARD_SHARDING, SOFT_SHARDING)),
    Option("scheduler-sharding-name", "sharding_name", "string",
           "the NodeShard whose nodes the scheduler schedules onto in hard or soft sharding mode"),
)}

NOT_MODELLED: dict[str, str] = {
    **{flag: "it does not change decisions" for flag in (
        "master", "kubeconfig", "ca-cert-file", "tls-cert-file", "tls-private-key-file", "lock-object-namespace",
        "scheduler-conf", "schedule-period", "resync-period", "version", "listen-address", "healthz-address",
        "kube-api-qps", "kube-api-burst", "plugins-dir", "csi-storage", "enable-healthz", "enable-metrics",
        "enable-pprof", "cache-dumper", "cache-dump-dir", "node-worker-threads", "gate-removal-worker-num",
        "resource-sync-timeout", "disable-default-scheduler-config", "leader-elect",
        "leader-elect-resource-namespace", "leader-elect-resource-name", "leader-elect-resource-lock",
        "leader-elect-lease-duration", "leader-elect-renew-deadline", "leader-elect-retry-period",
        "log-flush-frequency", "v", "vmodule", "logtostderr", "alsologtostderr", "stderrthreshold")},
    "feature-gates": "fumarole decides as Volcano does with its default feature gates",
    "ignored-provisioners": "fumarole does not model CSI volumes, whose requests it would change",
}



class OptionError(ValueError):
    """A bad option value; the message names the option and what it takes (``entry``: the bad list item)."""

    def __init__(self, message: str, entry: str | None = None) -> None:
        super().__init__(message)
        self.entry = entry


def flag_value(option: Option, texts: list[str]) -> Any:
    """The field value of a flag given ``texts`` (one per occurrence on the command line)."""
    text = texts[-1]
    if option.kind == "int32":
        value = parse_go_int32(text)
        if value is None:
            raise OptionError(f"--{option.flag} takes a 32-bit integer, not {text!r}")
        return value
    if option.kind == "bool":
        flag = parse_go_bool(text)
        if flag is None:
            raise OptionError(f"--{option.flag} takes true or false, not {text!r}")
        return flag
    if option.kind == "string":
        return _choice(option, text)
    if option.kind == "names":
        return _names(option, texts)
    return _labels(option, [part for text in texts for part in text.split(",")])


def _choice(option: Option, text: str) -> str:
    """``text``, when the option takes any string or ``text`` is one of its choices."""
    if option.choices and text not in option.choices:
        raise OptionError(f"{option.flag} takes {', '.join(option.choices[:-1])} or {option.choices[-1]}, not "
                          f"{text!r} (Volcano would take it as {option.choices[0]})")
    return text


def _names(option: Option, names: list[str]) -> tuple[str, ...]:
    if not names:
        raise OptionError(f"{option.flag} needs at least one scheduler name")
    return tuple(names)


def _labels(option: Option, entries: list[str]) -> tuple[str, ...]:
    for entry in entries:
        index = entry.find(":")
        if index < 0 or index >= len(entry) - 1:
            raise OptionError(f"{option.flag} entry {entry!r} is not name:value (Volcano would ignore it)", entry)
    return tuple(entries)


def _yaml_value(option: Option, value: Any) -> Any:
    """A ``schedulerOptions`` value: the YAML type the option takes (a string for a flag's text too)."""
    kind = option.kind
    if kind == "int32":
        if isinstance(value, bool) or not isinstance(value, int) or not INT32[0] <= value <= INT32[1]:
            raise OptionError(f"{option.flag} takes a 32-bit integer, not {value!r}")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise OptionError(f"{option.flag} takes true or false, not {value!r}")
        return value
    if kind == "string":
        if not isinstance(value, str):
            raise OptionError(f"{option.flag} takes a string, not {value!r}")
        return _choice(option, value)
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise OptionError(f"{option.flag} takes a string or a list of strings, not {value!r}")
    if kind == "names":
        return _names(option, list(items))
    return _labels(option, [part for item in items for part in item.split(",")])


def unknown_option(name: str, file: str, where: tuple[int, int], prefix: str = "",
                   candidates: Iterable[str] = ()) -> Diagnostic:
    """O001 for a name that is no option (did-you-mean among ``candidates`` or the options), O003 for a
    Volcano option fumarole does not model."""
    if name in NOT_MODELLED:
        return config_errors.option_not_modelled(file, Span(*where), f"{prefix}{name}", NOT_MODELLED[name], OPTIONS)
    hint = did_you_mean(name, list(candidates) or list(OPTIONS))
    if hint and prefix:
        hint = hint.replace("'", f"'{prefix}", 1)
    what = "option" if candidates else "scheduler option"
    return config_errors.unknown_option(file, Span(*where), what, f"{prefix}{name}",
                                        hint or "scheduler options: " + ", ".join(OPTIONS))


def read_options_block(block: Any, file: str) -> tuple[dict[str, Any], list[Diagnostic]]:
    """A ``schedulerOptions`` mapping as field overrides, and a diagnostic per bad entry."""
    if not isinstance(block, Mapping):
        return {}, [config_errors.options_not_a_mapping(file, Span(*position(block)))]
    overrides: dict[str, Any] = {}
    diags: list[Diagnostic] = []
    for name, value in block.items():
        option = OPTIONS.get(str(name))
        if option is None:
            diags.append(unknown_option(str(name), file, key_position(block, name)))
            continue
        try:
            overrides[option.field] = _yaml_value(option, value)
        except OptionError as exc:
            diags.append(config_errors.bad_option_value(file, Span(*_value_position(block, name, exc.entry)), str(exc)))
    return overrides, diags


def _value_position(block: Mapping, name: Any, entry: str | None) -> tuple[int, int]:
    """Where a bad value is: the list item holding the bad entry, else the option's value."""
    value = block[name]
    if isinstance(value, PosList):
        for index, item in enumerate(value):
            if entry is not None and isinstance(item, str) and entry in item.split(","):
                return position(value, index)
    return position(block, name)


def with_overrides(base: SchedulerOptions, *overrides: Mapping[str, Any]) -> SchedulerOptions:
    """``base`` with each mapping of field values applied in turn (later ones win)."""
    merged: dict[str, Any] = {}
    for layer in overrides:
        merged.update(layer)
    return replace(base, **merged)


DEFAULT_OPTIONS = SchedulerOptions()

__all__ = ["NO_SHARDING", "HARD_SHARDING", "SOFT_SHARDING", "SchedulerOptions", "Option", "OPTIONS", "NOT_MODELLED", "DEFAULT_OPTIONS", "OptionError",
           "flag_value", "read_options_block", "unknown_option", "with_overrides"]
