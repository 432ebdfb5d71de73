"""The diagnostics of a scenario's ``processState`` block (S030, docs/diagnostics.md): a restated
scheduler-process state that is not what the runner reads, or names what the bundle does not
declare.  One constructor per problem (as policy_lang's ``declaration_errors.py``): the message
and hint are written here once; the reader (``process_state_input.py``) passes the facts and the
place its positioned reader found.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from fumarole.policy_lang.diagnostics import Diagnostic, Span, did_you_mean
from fumarole.policy_lang.types import Type


def _s030(file: str, at: Span, message: str, hint: str | None = None) -> Diagnostic:
    return Diagnostic("S030", message, file, at, hint=hint)


def block_not_a_mapping(file: str, at: Span) -> Diagnostic:
    return _s030(file, at, "processState must be a mapping with predicateStartIndex, plugins and numaPending")


def unknown_key(file: str, at: Span, key: object, keys: Sequence[str]) -> Diagnostic:
    return _s030(file, at, f"unknown processState key '{key}'", did_you_mean(str(key), keys))


def bad_start_index(file: str, at: Span, index: object) -> Diagnostic:
    return _s030(file, at, f"predicateStartIndex must be a non-negative integer, not {index!r}")


def plugins_not_a_mapping(file: str, at: Span) -> Diagnostic:
    return _s030(file, at, "processState.plugins must map plugin names to their process state")


def plugin_not_in_bundle(file: str, at: Span, plugin: object, plugins: Iterable[str]) -> Diagnostic:
    return _s030(file, at, f"plugin '{plugin}' is not in the bundle", did_you_mean(str(plugin), plugins))


def plugin_state_not_a_mapping(file: str, at: Span, plugin: object) -> Diagnostic:
    return _s030(file, at, f"the process state of '{plugin}' must be a mapping of names to values")


def undeclared_state(file: str, at: Span, plugin: str, name: object, declared: Sequence[str]) -> Diagnostic:
    """``declared``: the names of the plugin's ``process state`` declarations, in order."""
    return _s030(file, at, f"plugin '{plugin}' declares no process state '{name}'",
                 did_you_mean(str(name), declared) or f"its process state: {', '.join(declared) or 'none'}")


def state_mistyped(file: str, at: Span, plugin: str, name: object, declared: Type, value: object) -> Diagnostic:
    return _s030(file, at, f"{plugin}.{name} must be {declared}, not {value!r}")


def numa_pending_not_a_mapping(file: str, at: Span) -> Diagnostic:
    return _s030(file, at, "processState.numaPending must map node names to their pending pods")


def node_pending_not_a_mapping(file: str, at: Span, node: object) -> Diagnostic:
    return _s030(file, at, f"numaPending.{node} must map pod UIDs to their pods")


def pending_pod_shape(file: str, at: Span, node: object, uid: object) -> Diagnostic:
    return _s030(file, at, f"numaPending.{node}.{uid} must be a mapping with name, namespace and cpus "
                 "(resource -> CPU list)")


def unknown_pending_pod_key(file: str, at: Span, key: object, keys: Sequence[str]) -> Diagnostic:
    return _s030(file, at, f"unknown key '{key}' of a pending pod", did_you_mean(str(key), keys))


def pending_cpus_not_a_list(file: str, at: Span, node: object, uid: object, resource: object,
                            value: object) -> Diagnostic:
    return _s030(file, at, f"numaPending.{node}.{uid}.cpus.{resource} must be a CPU list such as '0-3,8', "
                 f"not {value!r}")
