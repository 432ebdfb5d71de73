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

from fumarole.policy_lang.diagnostics import Diagnostic, Span
from fumarole.policy_lang.types import Type
from fumarole.runtime.api.numa import parse_cpu_set
from fumarole.runtime.authoring import process_state_errors
from fumarole.runtime.framework.process_state import ProcessState
from fumarole.runtime.ingest.kube_convert import ObjectReader, parse_time
from fumarole.runtime.ingest.scheduler_options import SchedulerOptions, read_options_block, with_overrides

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
        reader.report(process_state_errors.block_not_a_mapping(file, reader.at(block)))
        return state, reader.diagnostics
    for key in block:
        if key not in KEYS:
            reader.report(process_state_errors.unknown_key(file, reader.at_key(block, key), key, KEYS))
    index = block.get("predicateStartIndex", 0)
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        at = reader.at(block, "predicateStartIndex")
        reader.report(process_state_errors.bad_start_index(file, at, index))
    else:
        state.predicate_start_index = index
    if "numaPending" in block:
        state.numa_pending = _numa_pending(reader, block["numaPending"], reader.at(block, "numaPending"))
    by_plugin = block.get("plugins") or {}
    if not isinstance(by_plugin, Mapping):
        reader.report(process_state_errors.plugins_not_a_mapping(file, reader.at(block, "plugins")))
        return state, reader.diagnostics
    for plugin, values in by_plugin.items():
        states = declared.get(plugin)
        if states is None:
            at = reader.at_key(by_plugin, plugin)
            reader.report(process_state_errors.plugin_not_in_bundle(file, at, plugin, declared))
        elif not isinstance(values, Mapping):
            at = reader.at(by_plugin, plugin)
            reader.report(process_state_errors.plugin_state_not_a_mapping(file, at, plugin))
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
            at = reader.at_key(values, name)
            reader.report(process_state_errors.undeclared_state(reader.file, at, plugin, name, list(declared)))
            continue
        converted = _typed(value, t)
        if converted is _BAD:
            at = reader.at(values, name)
            reader.report(process_state_errors.state_mistyped(reader.file, at, plugin, name, t, value))
        else:
            out[str(name)] = converted
    return out


def _numa_pending(reader: ObjectReader, block: Any, where: Span) -> dict[str, dict[str, dict[str, Any]]]:
    """``numaPending``: node -> pod UID -> {name, namespace, cpus: {resource: CPU list}}."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    if not isinstance(block, Mapping):
        reader.report(process_state_errors.numa_pending_not_a_mapping(reader.file, where))
        return out
    for node, pods in block.items():
        if not isinstance(pods, Mapping):
            reader.report(process_state_errors.node_pending_not_a_mapping(reader.file, reader.at(block, node), node))
            continue
        for uid, pod in pods.items():
            if not isinstance(pod, Mapping) or not isinstance(pod.get("cpus"), Mapping):
                at = reader.at(pods, uid)
                reader.report(process_state_errors.pending_pod_shape(reader.file, at, node, uid))
                continue
            unknown = [key for key in pod if key not in PENDING_POD_KEYS]
            for key in unknown:
                at = reader.at_key(pod, key)
                reader.report(process_state_errors.unknown_pending_pod_key(reader.file, at, key, PENDING_POD_KEYS))
            cpus = pod["cpus"]
            bad = [res for res, text in cpus.items() if not isinstance(text, str) or parse_cpu_set(text) is None]
            for res in bad:
                at = reader.at(cpus, res)
                reader.report(process_state_errors.pending_cpus_not_a_list(reader.file, at, node, uid, res, cpus[res]))
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
