"""A scenario's ``processState`` block: restating a later cycle of one scheduler process.

```yaml
processState:
  predicateStartIndex: 144          # where the node scan starts (Volcano's lastProcessedNodeIndex)
  plugins:
    tdm: {last_eviction: "2026-11-21T12:00:00Z"}   # a plugin's `process state`, by name
```

Every name is checked against the bundle: the plugin must be in it and
declare that ``process state``, and the value must have the declared type (a
``float`` also takes an RFC 3339 time, as seconds since the epoch).
"""

from __future__ import annotations

from typing import Any, Mapping

from fumarole.policy_lang.diagnostics import Diagnostic, did_you_mean
from fumarole.policy_lang.types import Type
from fumarole.runtime.api.numa import parse_cpu_set
from fumarole.runtime.framework.process_state import ProcessState
from fumarole.runtime.ingest.kube_convert import ObjectReader, parse_time
from fumarole.runtime.ingest.scheduler_options import SchedulerOptions, read_options_block, with_overrides
from fumarole.runtime.ingest.yamlpos import key_position, position

KEYS = ("predicateStartIndex", "plugins", "numaPending")
PENDING_POD_KEYS = ("name", "namespace", "cpus")


def declared_process_states(plugins: Mapping[str, Any]) -> dict[str, dict[str, Type]]:
    """Each plugin's ``process state`` declarations, from a bundle's compiled plugins."""
    return {name: dict(policy.module.process_states) for name, policy in plugins.items()}


def read_process_state(block: Any, declared: Mapping[str, Mapping[str, Type]],
                       file: str) -> tuple[ProcessState, list[Diagnostic]]:
    """The state a scenario restates, and a diagnostic (S030) per problem.

    ``declared`` maps the bundle's plugin names to their process-state
    declarations (:func:`declared_process_states`).
    """
    reader = ObjectReader(file)
    state = ProcessState()
    if not isinstance(block, Mapping):
        reader.fail_at("S030", "processState must be a mapping with predicateStartIndex, plugins and numaPending",
                       position(block))
        return state, reader.diagnostics
    for key in block:
        if key not in KEYS:
            reader.fail_at("S030", f"unknown processState key '{key}'", key_position(block, key),
                           did_you_mean(str(key), KEYS))
    index = block.get("predicateStartIndex", 0)
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        reader.fail_at("S030", f"predicateStartIndex must be a non-negative integer, not {index!r}",
                       position(block, "predicateStartIndex"))
    else:
        state.predicate_start_index = index
    if "numaPending" in block:
        state.numa_pending = _numa_pending(reader, block["numaPending"], position(block, "numaPending"))
    by_plugin = block.get("plugins") or {}
    if not isinstance(by_plugin, Mapping):
        reader.fail_at("S030", "processState.plugins must map plugin names to their process state",
                       position(block, "plugins"))
        return state, reader.diagnostics
    for plugin, values in by_plugin.items():
        states = declared.get(plugin)
        if states is None:
            reader.fail_at("S030", f"plugin '{plugin}' is not in the bundle", key_position(by_plugin, plugin),
                           did_you_mean(str(plugin), declared))
        elif not isinstance(values, Mapping):
            reader.fail_at("S030", f"the process state of '{plugin}' must be a mapping of names to values",
                           position(by_plugin, plugin))
        else:
            state.plugins[str(plugin)] = _values(reader, str(plugin), values, states)
    return state, reader.diagnostics


def read_process_inputs(doc: Mapping, base: SchedulerOptions, declared: Mapping[str, Mapping[str, Type]],
                        file: str) -> tuple[SchedulerOptions | None, ProcessState, list[Diagnostic]]:
    """A scenario's ``schedulerOptions`` (over ``base``, None without the block) and ``processState``."""
    diags: list[Diagnostic] = []
    options = None
    if "schedulerOptions" in doc:
        overrides, diags = read_options_block(doc["schedulerOptions"], file)
        options = with_overrides(base, overrides)
    state = ProcessState()
    if "processState" in doc:
        state, state_diags = read_process_state(doc["processState"], declared, file)
        diags += state_diags
    return options, state, diags


def _values(reader: ObjectReader, plugin: str, values: Mapping, declared: Mapping[str, Type]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in values.items():
        t = declared.get(name)
        if t is None:
            known = ", ".join(declared) or "none"
            reader.fail_at("S030", f"plugin '{plugin}' declares no process state '{name}'", key_position(values, name),
                           did_you_mean(str(name), declared) or f"its process state: {known}")
            continue
        converted = _typed(value, t)
        if converted is _BAD:
            reader.fail_at("S030", f"{plugin}.{name} must be {t}, not {value!r}", position(values, name))
        else:
            out[str(name)] = converted
    return out


def _numa_pending(reader: ObjectReader, block: Any, where: tuple[int, int]) -> dict[str, dict[str, dict[str, Any]]]:
    """``numaPending``: node -> pod UID -> {name, namespace, cpus: {resource: CPU list}}."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    if not isinstance(block, Mapping):
        reader.fail_at("S030", "processState.numaPending must map node names to their pending pods", where)
        return out
    for node, pods in block.items():
        if not isinstance(pods, Mapping):
            reader.fail_at("S030", f"numaPending.{node} must map pod UIDs to their pods", position(block, node))
            continue
        for uid, pod in pods.items():
            if not isinstance(pod, Mapping) or not isinstance(pod.get("cpus"), Mapping):
                reader.fail_at("S030", f"numaPending.{node}.{uid} must be a mapping with name, namespace and cpus "
                               "(resource -> CPU list)", position(pods, uid))
                continue
            unknown = [key for key in pod if key not in PENDING_POD_KEYS]
            for key in unknown:
                reader.fail_at("S030", f"unknown key '{key}' of a pending pod", key_position(pod, key),
                               did_you_mean(str(key), PENDING_POD_KEYS))
            cpus = pod["cpus"]
            bad = [res for res, text in cpus.items() if not isinstance(text, str) or parse_cpu_set(text) is None]
            for res in bad:
                reader.fail_at("S030", f"numaPending.{node}.{uid}.cpus.{res} must be a CPU list such as '0-3,8', "
                               f"not {cpus[res]!r}", position(cpus, res))
            if not unknown and not bad:
                out.setdefault(str(node), {})[str(uid)] = {
                    "name": str(pod.get("name") or ""), "namespace": str(pod.get("namespace") or ""),
                    "cpus": {str(res): str(text) for res, text in cpus.items()}}
    return out


_BAD = object()


def _typed(value: Any, t: Type) -> Any:
    """``value`` as the declared type, or _BAD."""
    if value is None:
        return None if t.optional else _BAD
    if isinstance(value, bool):
        return value if t.name == "bool" else _BAD
    if t.name == "int":
        return value if isinstance(value, int) else _BAD
    if t.name in ("float", "duration"):
        if isinstance(value, (int, float)):
            return float(value)
        if t.name == "float":  # a time, quoted or as YAML parsed it
            try:
                return parse_time(value)
            except (TypeError, ValueError):
                return _BAD
        return _BAD
    if t.name == "string":
        return value if isinstance(value, str) else _BAD
    return _BAD


__all__ = ["read_process_state", "read_process_inputs", "declared_process_states"]
