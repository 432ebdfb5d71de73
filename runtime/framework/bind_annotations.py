"""What the session records for a pod's bind besides its node: the annotations the bind
writes to the pod (Volcano's MergePodAnnotations / DeletePodAnnotations, a device
assignment) and the CPUs numa-aware gave it (AddUnassignedNumaPods).  The decisions list
both per pod.

Standard-library functions (runtime/schema.yaml); each takes the session first, where the
schema's template passes ``_rt``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fumarole.runtime.api.model import Node, Task
from fumarole.runtime.api.numa import format_cpu_set
from fumarole.runtime.framework.numa_pending import record_pending

if TYPE_CHECKING:
    from fumarole.runtime.framework.session import Session


def set_bind_annotations(session: Session, task: Task, values: dict[str, str]) -> None:
    """Volcano's MergePodAnnotations: what the task's bind will write to the pod."""
    session.pod_annotations.setdefault(task.uid, {}).update(values)


def delete_bind_annotations(session: Session, task: Task, keys: list[str]) -> None:
    """Volcano's DeletePodAnnotations, for the annotations this session set."""
    carried = session.pod_annotations.get(task.uid)
    if carried:
        for key in keys:
            carried.pop(key, None)


def bind_annotations_of(session: Session, task: Task) -> dict[str, str]:
    return dict(session.pod_annotations.get(task.uid) or {})


def record_numa_assignment(session: Session, task: Task, node: Node, sets: dict[str, list[int]]) -> None:
    """Volcano's AddUnassignedNumaPods: the CPUs a placed pod holds until its node reports them
    (in the decisions, and for the process's next sessions)."""
    session.decisions.numa_assignments[task.key] = {name: format_cpu_set(ids) for name, ids in sets.items()}
    record_pending(session.process_state.numa_pending, node.name, task.uid, task.name, task.namespace, sets)
