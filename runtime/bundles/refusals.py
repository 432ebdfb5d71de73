"""Configurations Volcano refuses to run (C022): it exits rather than schedule with them.

Each rule restates one of upstream's own refusals, so that a configuration
Volcano would die on is an error before fumarole decides anything with it,
positioned where the configuration says the offending thing:

- ``proportion`` and ``drf`` with ``enableHierarchy`` in one tier, refused by Volcano's
  configuration loader (``UnmarshalSchedulerConf``, ``pkg/scheduler/util.go``) and by nothing
  after it: ``framework.OpenSession`` runs such tiers (``plugins/drf/hdrf_test.go`` TestHDRF does),
  so a scenario's inline ``scheduler`` block, which restates the tiers a session is opened with,
  is not refused (``build_bundle(loaded=False)``);
- deviceshare's ``klog.Fatal`` in ``enablePredicate`` (``plugins/deviceshare/
  deviceshare.go``), run by the plugin's builder, that is when the first session
  opens: GPU sharing together with GPU number, or either of them with vGPU.

One more configuration takes the scheduler down, not at once but in every session, so no
decision of it exists either: rescheduling's lowNodeUtilization reads its ``thresholds`` with a
bare ``v.(int)`` (``low_node_utilization.go`` ``parse``), which panics on any other value, each
time the strategy runs -- and with an ``interval`` of 0 or less it runs in every session the
``shuffle`` action asks for victims (``timeToRun``).  Such a threshold is a C012 error there
(``panicking_thresholds``); with a positive interval the strategy skips sessions, and it stays the
warning the argument reader gives (docs/diagnostics.md, C012).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from fumarole.policy_lang.diagnostics import Diagnostic, Span
from fumarole.runtime.bundles.arguments import argument_error, go_int, mapstructure_field
from fumarole.runtime.ingest.scheduler_config import PluginEntry
from fumarole.runtime.ingest import config_errors
from fumarole.runtime.ingest.yamlpos import key_position

LOW_NODE_UTILIZATION = "lowNodeUtilization"


@dataclass(frozen=True)
class ExclusiveSwitches:
    """A plugin's boolean arguments Volcano refuses to see on together: any of ``first`` with any of
    ``second`` (by their configuration keys); ``fatal`` is the message Volcano exits with."""

    plugin: str
    first: tuple[str, ...]
    second: tuple[str, ...]
    fatal: str


# In the order deviceshare checks them: with all three on, Volcano dies of the first.
EXCLUSIVE_SWITCHES = (
    ExclusiveSwitches("deviceshare", ("deviceshare.GPUSharingEnable",), ("deviceshare.GPUNumberEnable",),
                      "can not define true in both gpu sharing and gpu number"),
    ExclusiveSwitches("deviceshare", ("deviceshare.GPUSharingEnable", "deviceshare.GPUNumberEnable"),
                      ("deviceshare.VGPUEnable",), "gpu-share and vgpu can't be used together"),
)


def refused_tiers(tiers: Sequence[Sequence[PluginEntry]], file: str) -> list[Diagnostic]:
    """C022 for a tier holding proportion and drf with enableHierarchy."""
    out = []
    for tier in tiers:
        names = [e.name for e in tier]
        if "proportion" in names and any(e.name == "drf" and e.switches.get("enableHierarchy") for e in tier):
            out.append(config_errors.hierarchical_drf_beside_proportion(file, Span(*tier[0].pos)))
    return out


def refused_arguments(entry: PluginEntry, values: Mapping[str, Any], raw: Mapping[str, Any],
                      file: str) -> Diagnostic | None:
    """C022 for the first pair of switches of ``entry``'s plugin that Volcano refuses together.

    ``values`` are the entry's arguments by configuration key, as resolved (defaults included);
    ``raw`` is where they were written, for the position of the second switch.
    """
    for rule in EXCLUSIVE_SWITCHES:
        if rule.plugin != entry.name:
            continue
        first = [key for key in rule.first if values.get(key) is True]
        second = [key for key in rule.second if values.get(key) is True]
        if first and second:
            where = key_position(raw, second[0]) if second[0] in raw else entry.pos
            return config_errors.exclusive_switches(file, Span(*where), entry.name, second[0], first[0], rule.fatal)
    return None


def panicking_thresholds(entry: PluginEntry, arguments: Mapping[str, Any], actions: Sequence[str],
                         file: str) -> list[Diagnostic]:
    """C012 errors for the thresholds rescheduling's lowNodeUtilization panics on in every session.

    The strategy runs when ``shuffle`` asks the plugin for victims (``enabledVictim``) and
    ``interval`` has passed since the last run, so in every session when it is 0 or less; it reads
    the params of the last strategy of its name: ``thresholds`` first -- a value that is not a
    mapping ends the reading there, without a panic -- then ``targetThresholds``, each entry with
    ``k.(string)`` and ``v.(int)``.  ``arguments`` are the entry's resolved ones (by name).
    """
    if (entry.name != "rescheduling" or "shuffle" not in actions or not entry.switches.get("enabledVictim", True)
            or arguments["interval"] > 0):
        return []
    index, params = _last_params(entry.arguments, arguments["strategy_names"])
    for section in ("thresholds", "targetThresholds"):
        if section not in params:  # a key of the Params map: matched exactly, unlike a field
            continue
        table = params[section]
        if not isinstance(table, dict):
            return []
        bad = [(k, v) for k, v in table.items() if not (isinstance(k, str) and go_int(v))]
        if bad:  # a key that is not a text panics as its value would (`k.(string)`)
            return [config_errors.panicking_threshold(argument_error(
                table, k, *((v, "int") if isinstance(k, str) else (k, "text key")), file, f"plugin '{entry.name}'",
                f"strategies/{index}/params/{section}/{k}")) for k, v in bad]
    return []


def _last_params(raw: Mapping[str, Any], names: Mapping[str, str]) -> tuple[int, Mapping[str, Any]]:
    """The index and params of the last strategy named lowNodeUtilization (RegisteredStrategyConfigs
    keeps the last one); params {} when none has a mapping there."""
    indexes = [int(i) for i, name in names.items() if name == LOW_NODE_UTILIZATION]
    strategies = raw.get("strategies")
    if not indexes or not isinstance(strategies, list):
        return -1, {}
    strategy = strategies[max(indexes)]
    key = mapstructure_field(strategy, "params")
    params = strategy[key] if key is not None else None
    return max(indexes), params if isinstance(params, dict) else {}

