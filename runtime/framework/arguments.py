"""What a policy reads of the scheduler configuration beyond its own arguments (Volcano's
``framework/arguments.go`` GetArgOfActionFromConf, ``Session.HierarchyEnabled``,
GetMetricsConf).

Standard-library functions (runtime/schema.yaml); each takes the session first, where the
schema's template passes ``_rt``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fumarole.runtime.framework.session import Session


def hierarchy_enabled(session: Session, plugin: str) -> bool:
    """Session.HierarchyEnabled: the enableHierarchy switch of the first tier entry naming the plugin."""
    for tier in session.bundle.tiers:
        for entry in tier:
            if entry.name == plugin:
                return entry.switches.get("enableHierarchy", False)
    return False


def action_flag(session: Session, action: str, key: str, default: bool) -> bool:
    """GetArgOfActionFromConf(...).GetBool: a YAML boolean under the action's configuration, else the default."""
    value = session.bundle.config.configurations.get(action, {}).get(key)
    return value if isinstance(value, bool) else default


def metrics_setting(session: Session, key: str) -> str:
    """A setting of the configuration's `metrics` block (Volcano's GetMetricsConf), "" when unset."""
    return session.bundle.config.metrics.get(key, "")
