"""The namespace compiled policies run in: the documented standard library.

Every name here is reachable from policies only through ``runtime/schema.yaml``
(the checker refuses anything else); docs/stdlib.md lists them.  Functions take
and return values: no policy ever mutates a Resource it did not create.

Nothing here leads back to Python: no module objects (the Kubernetes and Go
helpers are plain namespaces holding only the functions the schema names),
and the builtins are a short list of pure functions.
"""

from __future__ import annotations

import math
from inspect import isfunction
from types import ModuleType, SimpleNamespace

from fumarole.runtime.api import conditions as _conditions_module
from fumarole.runtime.api import object_fields as _fields_module
from fumarole.runtime.api import resource as R
from fumarole.runtime.api.fit import FitError
from fumarole.runtime.api.resource import Resource
from fumarole.runtime.framework import arguments as _arguments_module
from fumarole.runtime.framework import bind_annotations as _bind_module
from fumarole.runtime.framework import dry_run as _dry_run_module
from fumarole.runtime.framework.batch_forms import BatchForm
from fumarole.runtime.framework import eviction as _eviction_module
from fumarole.runtime.framework import extender_lib as _extender_module
from fumarole.runtime.framework import go_semantics as _go_module
from fumarole.runtime.framework.go_sort import sort_slice
from fumarole.runtime.framework import job_info as _job_info_module
from fumarole.runtime.framework import k8s_filters as _k8s_filters_module
from fumarole.runtime.framework import queue_info as _queue_module
from fumarole.runtime.framework import scheduler_helper as _scheduler_module
from fumarole.runtime.framework import text_lib as _text_module
from fumarole.runtime.framework import usage_facts as _usage_module
from fumarole.runtime.framework import vector_lib as _vector_module
from fumarole.runtime.framework.budget import StepBudget, budget_of
from fumarole.runtime.framework.policy_error import PolicyRuntimeError
from fumarole.runtime.framework.priority_queue import PriorityQueue
from fumarole.runtime.framework.statement import SavedOperations
from fumarole.runtime.api import constraints as _limits_module
from fumarole.runtime.api import ascend as _ascend_module
from fumarole.runtime.api import devices as _devices_module
from fumarole.runtime.api import numa as _numa_module
from fumarole.runtime.k8s import (
    nodeaffinity,
    noderesources,
    nodeports,
    nodeunschedulable,
    podspec,
    tainttoleration,
)


__all__ = ["PolicyRuntimeError", "namespace"]

# The functions of runtime/schema.yaml's `_k8s.NAME` and `_go.NAME` expressions; nothing else of those modules.
_K8S_FUNCTIONS: dict[ModuleType, tuple[str, ...]] = {
    nodeaffinity: ("has_node_selection", "has_preferred_node_affinity", "matches_node_selector_and_affinity",
                   "node_affinity_conflict", "preferred_node_affinity_score", "preferred_node_affinity_unparsable"),
    noderesources: ("balanced_allocation_score", "nonzero_request", "view_nonzero_requested", "view_requested"),
    nodeports: ("host_port_conflict",),
    nodeunschedulable: ("tolerates_unschedulable",),
    podspec: ("has_start_time", "only_queue_allocation_gate", "pod_phase", "pod_scheduled_since",
              "start_time", "terminating_by_preemption"),
    tainttoleration: ("intolerable_prefer_no_schedule", "untolerated_taint"),
}
_GO_FUNCTIONS = ("int_or_percent", "json_int_map", "json_string", "local_time", "parse_quantity", "parse_clock",
                 "parse_duration", "parse_float", "pow", "quantity_milli_value", "quantity_value", "trim_space")
_CONDITION_FUNCTIONS = ("job_condition", "job_conditions", "job_evicted_at", "job_pending_since", "job_scheduled_at",
                        "task_condition", "task_conditions", "task_evicted_at", "task_pending_since",
                        "task_scheduled_at")
_TEXT_FUNCTIONS = ("ends_with", "lower", "parse_time", "starts_with", "time", "trim_prefix", "trim_suffix", "upper")


def _library(module: ModuleType, names: tuple[str, ...]) -> SimpleNamespace:
    """Only ``names`` of ``module``: the functions generated code calls, without the module itself."""
    return SimpleNamespace(**{name: getattr(module, name) for name in names})


def _public_functions(module: ModuleType) -> tuple[str, ...]:
    """The functions a module defines for generated code (vector_lib: what the batch forms call)."""
    return tuple(name for name, value in vars(module).items()
                 if not name.startswith("_") and isfunction(value) and value.__module__ == module.__name__)


class _ResourceLibrary:
    """Resource functions in value style; names follow runtime/schema.yaml."""

    Resource = Resource
    less_equal = staticmethod(R.less_equal)
    less_equal_sum = staticmethod(R.less_equal_sum)
    within_requested_after = staticmethod(R.within_requested_after)
    less = staticmethod(R.less)
    less_partly = staticmethod(R.less_partly)
    less_equal_partly = staticmethod(R.less_equal_partly)
    equal = staticmethod(R.equal)
    exactly_equal = staticmethod(R.exactly_equal)
    exceeded_part = staticmethod(R.exceeded_part)
    res_max = staticmethod(R.res_max)
    res_min = staticmethod(R.res_min)
    share = staticmethod(R.share)
    less_equal_partly_with_dimension = staticmethod(R.less_equal_partly_with_dimension)
    less_equal_partly_with_dimension_zero_filtered = staticmethod(R.less_equal_partly_with_dimension_zero_filtered)
    greater_partly_with_dimension = staticmethod(R.greater_partly_with_dimension)
    greater_partly_relevant = staticmethod(R.greater_partly_relevant)

    @staticmethod
    def added_in_order(budget: StepBudget, start: R.Resource, terms: list[R.Resource], adds: list[bool],
                       begin: int, end: int) -> R.Resource:
        """R.added_in_order, one step per term it passes (as the loop it replaces would take)."""
        budget.charge(max(end - begin, 0))
        return R.added_in_order(start, terms, adds, begin, end)

    @staticmethod
    def insufficient(l: R.Resource, r: R.Resource) -> list[str]:
        return R.less_equal_with_names(l, r, R.ZERO)[1]

    @staticmethod
    def within_requested(l: R.Resource | None, r: R.Resource | None, req: R.Resource) -> bool:
        return R.less_equal_with_dimension(l, r, req)[0]

    @staticmethod
    def exceeding_requested(l: R.Resource | None, r: R.Resource | None, req: R.Resource) -> list[str]:
        return R.less_equal_with_dimension(l, r, req)[1]

    @staticmethod
    def increased(l: R.Resource, r: R.Resource) -> R.Resource:
        return R.diff(l, r, R.ZERO)[0]

    @staticmethod
    def decreased(l: R.Resource, r: R.Resource) -> R.Resource:
        return R.diff(l, r, R.ZERO)[1]

    @staticmethod
    def min_dimension(l: R.Resource, r: R.Resource, mode: str) -> R.Resource:
        return l.clone().min_dimension(r, mode)

    @staticmethod
    def has_dimension(r: R.Resource, name: str) -> bool:
        if name in ("cpu", "memory"):
            return True
        return r.scalars is not None and name in r.scalars

    @staticmethod
    def with_value(r: R.Resource, name: str, value: float) -> R.Resource:
        out = r.clone()
        if name == "cpu":
            out.milli_cpu = value
        elif name == "memory":
            out.memory = value
        else:
            if out.scalars is None:
                out.scalars = {}
            out.scalars[name] = value
        return out


def _div(a: float, b: float) -> float:
    """IEEE division as Go does it for floats: x/0 is +-Inf, 0/0 is NaN."""
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0 or a != a:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _str(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if value is None:
        return "none"
    return str(value)


def _parse_float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def namespace() -> dict:
    """Fresh globals for exec'ing a compiled policy module."""
    return {
        "__builtins__": {"len": len, "max": max, "min": min, "sum": sum, "abs": abs, "list": list,
                         "int": int, "float": float, "bool": bool},
        "_res": _ResourceLibrary,
        "_k8s": SimpleNamespace(**{name: getattr(module, name) for module, names in _K8S_FUNCTIONS.items()
                                   for name in names}),
        "_go": _library(_go_module, _GO_FUNCTIONS),
        "_text": _library(_text_module, _TEXT_FUNCTIONS),
        "_cond": _library(_conditions_module, _CONDITION_FUNCTIONS),
        "_fields": _library(_fields_module, ("queue_spec",)),
        "_math": SimpleNamespace(floor=math.floor),
        "_eviction": _library(_eviction_module, ("Eviction", "VictimBundle")),
        "_ext": _library(_extender_module, ("client", "status_fit_error", "resource_names")),
        "_usage": _library(_usage_module, ("metrics_time", "cpu_usage", "memory_usage", "task_limit",
                                                          "priority_set", "qos_class")),
        "_limits": _library(_limits_module, ("queue_has_affinity", "queue_node_groups", "node_group_limits")),
        "_dev": _library(_devices_module, ("gpu_share_cards", "pod_gpu_memory", "pod_gpu_number",
                                            "pod_gpu_indexes", "vgpu_cards", "pod_vgpu_requested",
                                            "pod_vgpu_requests", "pod_vgpu_assigned")),
        "_npu": _library(_ascend_module, ("ascend_cards", "ascend_core_mode", "pod_ascend_requested",
                                            "pod_ascend_requests", "pod_ascend_assigned")),
        "_numa": _library(_numa_module, ("node_numa", "container_cpus")),
        "_go_sort": sort_slice,
        "_job": _library(_job_info_module, ("deduct_gated", "job_evicting", "min_resource_list", "min_resource_names",
                                            "record_fit_error", "record_fit_errors", "holding_jobs",
                                            "holding_jobs_in", "holding_tasks_in", "holding_queues",
                                            "set_condition", "sub_job_of")),
        "_queue": _library(_queue_module, ("queue_allocated", "queue_evicting", "queue_jobs", "queue_of",
                                           "queue_of_task", "queue_tree")),
        "_sched": _library(_scheduler_module, ("filter_out_unresolvable_nodes", "fit_error", "fit_errors_for_all", "fit_errors_on",
                                               "nodes_per_key", "select_best", "sort_by_score", "values_by_key")),
        "_conf": _library(_arguments_module, ("action_flag", "hierarchy_enabled", "metrics_setting")),
        "_bind": _library(_bind_module, ("bind_annotations_of", "delete_bind_annotations", "record_numa_assignment",
                                         "set_bind_annotations")),
        "_view": _library(_k8s_filters_module, ("affinity_prefilter_skips", "node_view_add", "node_view_remove",
                                                "placements_may_refuse",
                                                "pod_affinity_failure", "pod_view", "topology_spread_failure")),
        "_dry": _library(_dry_run_module, ("dry_run_copy", "remove_task", "add_task")),
        "_V": _library(_vector_module, _public_functions(_vector_module)),
        "_div": _div,
        "_str": _str,
        "_parse_float": _parse_float,
        "_FitError": FitError,
        "_PriorityQueue": PriorityQueue,
        "_SavedOperations": SavedOperations,
        "_BatchForm": BatchForm,  # what a batch form is registered as (batch_forms.py)
        "_budget_of": budget_of,
    }
