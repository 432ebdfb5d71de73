"""What one Volcano scheduler process remembers from one session to the next.

Volcano's scheduler keeps a little state outside its sessions, for the life of
the process: the rotating start index of the predicate helper's node scan (a
package variable in ``util/scheduler_helper.go``) and plugin package variables
such as tdm's time of the last eviction.  fumarole makes that state one
explicit object: a session reads it when it opens and writes it back when it
closes, so whoever runs a sequence of sessions (``fumarole serve``, trace
replay) decides each one as the same Volcano process would.

The API is small on purpose::

    state = ProcessState()                    # a freshly started scheduler
    run_session(Session(bundle, cluster, process_state=state))   # framework/lifecycle.py
    state.predicate_start_index               # where the next session's scan starts
    state.plugins["tdm"]["last_eviction"]     # a plugin's process state (see below)
    state.to_dict() / ProcessState.from_dict(data)   # JSON round trip

A policy declares which of its state variables live as long as the process
with ``process state NAME: TYPE`` (docs/language.md); their values are kept
in ``plugins[plugin][NAME]`` (absent until a session sets one, which means
the declaration's default).  Values are JSON scalars (numbers, strings,
booleans) or None.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from fumarole.policy_lang.compiled import PROCESS_STATE_ENTRY


# The entry a compiled plugin's builder adds when it declares process state: a
# function returning {name: current value} for the session to save at close.
PROCESS_STATE_HOOK = PROCESS_STATE_ENTRY


@dataclass
class ProcessState:
    """The scheduler process's memory across sessions; a fresh object is a fresh process."""

    predicate_start_index: int = 0
    plugins: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The CPUs numa-aware gave pods their nodes do not report yet (Volcano's UnassignedNumaPods):
    # node -> pod UID -> {"name", "namespace", "cpus": {resource: CPU list}} (framework/numa_pending.py).
    numa_pending: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

    def plugin_value(self, plugin: str, name: str, default: Any) -> Any:
        """A plugin's process-state value, or the declaration's default when never set."""
        return self.plugins.get(plugin, {}).get(name, default)

    def copy(self) -> "ProcessState":
        return ProcessState(self.predicate_start_index, copy.deepcopy(self.plugins), copy.deepcopy(self.numa_pending))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``/v1/status``, a scenario's ``processState`` block); ``numaPending``
        only when some CPUs are pending."""
        out: dict[str, Any] = {"predicateStartIndex": self.predicate_start_index,
                               "plugins": copy.deepcopy(self.plugins)}
        if self.numa_pending:
            out["numaPending"] = copy.deepcopy(self.numa_pending)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ProcessState":
        """The inverse of :meth:`to_dict`; assumes validated data (authoring.process_state validates)."""
        plugins = {str(name): dict(values) for name, values in (data.get("plugins") or {}).items()}
        return cls(int(data.get("predicateStartIndex") or 0), plugins,
                   copy.deepcopy(dict(data.get("numaPending") or {})))


__all__ = ["ProcessState", "PROCESS_STATE_HOOK"]
