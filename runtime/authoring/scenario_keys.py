"""The keys a scenario file may use: one table, and the check that rejects every other key.

A misspelt key must never make a test pass by asserting nothing (``bindz:``
instead of ``binds:`` would compare nothing at all), so a key that is not in
these tables is an error (S006) at its position, with a did-you-mean.

To support a new key, add it here (and to FORMAT.md / docs/testing.md);
the runner that reads it lives in ``scenario.py``.  Keys the conformance
cases under ``cases-scope/`` already use but fumarole does not run yet are
listed too, so those cases load and fail on what is missing, not on a key.
"""

from __future__ import annotations

from typing import Any

from fumarole.policy_lang.diagnostics import Diagnostic, Span
from fumarole.runtime.authoring import scenario_errors
from fumarole.runtime.ingest.yamlpos import key_position, position

# Top level of a scenario file.
SCENARIO_KEYS = frozenset({
    "name", "source", "description",      # what the case is and where it comes from
    "scheduler", "bundle",                # the policies: a volcano-scheduler.conf, or a bundle folder
    "schedulerOptions",                   # scheduler command-line options the session depends on
    "objects", "cluster",                 # the cluster: inline objects, or a dump file
    "now",                                # the session clock
    "processState",                       # scheduler process state carried across sessions
    "extenders",                          # stand-in HTTP extenders: canned answers per verb
    "expect", "expectHooks",              # what the session must decide / what hook calls must return
})

# Under `expect`.
EXPECT_KEYS = frozenset({
    "binds", "bindCount", "evicted", "pipelined", "podGroupPhase", "taskStatusCount",
    "bindCountsPerHyperNode",             # cases-scope: binds per HyperNode
    "bindAnnotations",                    # the annotations a bind writes (deviceshare's device assignment)
    "numaAssignments",                    # the CPUs numa-aware gave each placed pod (exactly, when given)
})

# Each `expectHooks` entry: its `hook` and the fields that hook reads (FORMAT.md, cases-scope/README.md).
HOOK_FIELDS: dict[str, frozenset[str]] = {
    "nodeOrder": frozenset({"task", "scores", "tolerance"}),
    "batchNodeOrder": frozenset({"task", "jobAllocatedHyperNode", "nodes", "scores", "tolerance", "exact"}),
    "hyperNodeOrder": frozenset({"subJob", "plugin", "scores", "tolerance", "exact"}),
    "predicate": frozenset({"task", "feasible"}),
    "jobEnqueued": frozenset({"job"}),
    "jobEnqueueable": frozenset({"job", "result"}),
    "jobOrder": frozenset({"left", "right", "result"}),
    "jobOrderCompare": frozenset({"left", "right", "result"}),
    "taskOrder": frozenset({"left", "right", "result"}),
    "preemptable": frozenset({"preemptor", "candidates", "result"}),
    "unifiedEvictable": frozenset({"kind", "jobPriority", "candidates", "count", "result"}),
    "reclaimable": frozenset({"reclaimer", "candidates", "result"}),
    "victimTasks": frozenset({"tasks", "count", "result"}),
    "victimsQueue": frozenset({"preemptor", "victims", "first"}),
    "potentialNodes": frozenset({"task", "unresolvableNodes", "result"}),
}


def unknown_keys(doc: Any, file: str) -> list[Diagnostic]:
    """S006 for every key of the scenario ``doc`` (and of its `expect` / `expectHooks`) not in the tables."""
    if not isinstance(doc, dict):
        return []
    out = _unknown(doc, SCENARIO_KEYS, "a scenario", file)
    expect = doc.get("expect")
    if isinstance(expect, dict):
        out += _unknown(expect, EXPECT_KEYS, "`expect`", file)
    elif expect is not None:
        out.append(scenario_errors.expect_not_a_mapping(file, Span(*position(doc, "expect"))))
    hooks = doc.get("expectHooks")
    if hooks is not None and not isinstance(hooks, list):
        out.append(scenario_errors.hook_calls_not_a_list(file, Span(*position(doc, "expectHooks"))))
    for index, entry in enumerate(hooks if isinstance(hooks, list) else []):
        if not isinstance(entry, dict):
            out.append(scenario_errors.hook_call_not_a_mapping(file, Span(*position(hooks, index))))
            continue
        hook = entry.get("hook")
        fields = HOOK_FIELDS.get(hook) if isinstance(hook, str) else None
        if fields is None:
            out.append(scenario_errors.unknown_hook(file, Span(*position(entry, "hook")), hook, HOOK_FIELDS))
            continue
        out += _unknown(entry, fields | {"hook"}, f"a `{hook}` call", file)
    return out


def _unknown(mapping: dict, allowed: frozenset[str], where: str, file: str) -> list[Diagnostic]:
    return [scenario_errors.unknown_key(file, Span(*key_position(mapping, key)), key, where, allowed)
            for key in mapping if key not in allowed]
