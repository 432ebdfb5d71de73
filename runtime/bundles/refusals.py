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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from fumarole.policy_lang.diagnostics import Diagnostic, Span
from fumarole.runtime.ingest.scheduler_config import PluginEntry
from fumarole.runtime.ingest import config_errors
from fumarole.runtime.ingest.yamlpos import key_position


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
