"""Rendering what commands print: a session's decisions and their explanations (``run``), a decision
diff (``diff``), and the json / yaml documents."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:  # `run` prints a table without the explaining machinery
    from fumarole.runtime.authoring.decision_diff import DecisionDiff
    from fumarole.runtime.authoring.explanations import Explanation
    from fumarole.runtime.framework.session import Decisions, Session


def _table(headers: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = lambda cells: "  " + "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return [line(headers)] + [line(r) for r in rows]


def render_document(data: Any, fmt: str) -> str:
    """``-o json`` or ``-o yaml``: the same document either way."""
    if fmt == "yaml":
        import yaml

        return yaml.safe_dump(data, sort_keys=True, default_flow_style=False, allow_unicode=True).rstrip("\n")
    return json.dumps(data, indent=2, sort_keys=True)


def render_table(session: Session, decisions: Decisions) -> str:
    bundle = session.bundle
    revision = f" revision {bundle.revision}" if bundle.revision else ""
    out = [f"Session: bundle {bundle.name}{revision}; actions {', '.join(bundle.config.actions) or '(none)'}; "
           f"{len(session.node_list)} nodes, {len(session.queue_list)} queues, {len(session.job_list)} jobs", ""]

    def section(title: str, headers: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
        out.append(f"{title} ({len(rows)})")
        out.extend(_table(headers, rows) if rows else ["  none"])
        out.append("")

    section("Enqueued", ("PODGROUP",), [(j,) for j in decisions.enqueued])
    # With HyperNodes in the cluster, where each bind and each job landed in the topology.
    topology = decisions.has_hyper_nodes
    if topology:
        section("Binds", ("POD", "NODE", "HYPERNODE"),
                [(p, n, decisions.node_hyper_nodes.get(n) or "-") for p, n in decisions.binds])
    else:
        section("Binds", ("POD", "NODE"), [(p, n) for p, n in decisions.binds])
    if decisions.bind_annotations:
        section("Bind annotations", ("POD", "ANNOTATION", "VALUE"),
                [(p, k, v) for p, values in decisions.bind_annotations.items() for k, v in sorted(values.items())])
    if decisions.numa_assignments:
        section("NUMA assignments", ("POD", "RESOURCE", "CPUS"),
                [(p, r, c) for p, sets in decisions.numa_assignments.items() for r, c in sorted(sets.items())])
    section("Pipelined", ("POD", "NODE", "PODGROUP"),
            [(p, n, j) for j, tasks in sorted(decisions.pipelined.items()) for p, n in tasks])
    section("Evictions", ("POD", "REASON"), [(p, r) for p, r in decisions.evictions])
    rows = []
    for job in session.job_list:
        counts = decisions.status_counts.get(job.uid, {})
        tasks = ", ".join(f"{s} {n}" for s, n in sorted(counts.items()))
        row = (job.uid, job.queue, decisions.phases.get(job.uid, ""))
        rows.append(row + ((decisions.hyper_nodes.get(job.uid, "-"),) if topology else ()) + (tasks,))
    section("PodGroups", ("PODGROUP", "QUEUE", "PHASE") + (("HYPERNODE",) if topology else ()) + ("TASKS",), rows)
    return "\n".join(out).rstrip()



def render_explanations(explanations: Sequence[Explanation], job_order: Sequence[str] = ()) -> str:
    """Explanations grouped per PodGroup (in ``job_order``, then any others), each with its reasons."""
    by_job: dict[str, list[Explanation]] = {job: [] for job in job_order}
    for explanation in explanations:
        by_job.setdefault(explanation.job, []).append(explanation)
    out = [f"Explanations ({len(explanations)})"]
    for job, items in by_job.items():
        if not items:
            continue
        out.append(f"  {job}")
        for item in items:
            out.append(f"    {item.kind}: {item.summary}")
            out.extend(f"      {r.line()}" for r in item.because)
    if len(out) == 1:
        out.append("  none")
    return "\n".join(out)


def render_diff(diff: DecisionDiff, base: str, candidate: str, base_explanations: Sequence[Explanation],
                candidate_explanations: Sequence[Explanation]) -> str:
    """``fumarole diff``: each side's decisions the other did not make, with the reasons of the side
    that made them, then the one-line summary."""
    from fumarole.runtime.authoring.decision_diff import explanation_of

    out = [f"Base: {base}", f"Candidate: {candidate}", ""]
    for title, decisions, explanations in (("Only in base", diff.only_base, base_explanations),
                                           ("Only in candidate", diff.only_candidate, candidate_explanations)):
        out.append(f"{title} ({len(decisions)})")
        if not decisions:
            out.append("  none")
        for decision in decisions:
            out.append(f"  {decision}")
            explanation = explanation_of(decision, explanations)
            if explanation is not None:
                out.append(f"    {explanation.summary}")
                out.extend(f"      {r.line()}" for r in explanation.because)
        out.append("")
    out.append(diff.summary())
    return "\n".join(out)
