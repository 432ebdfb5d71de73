"""What a replay measures, and the figures made from it (metrics.json).

The :class:`Recorder` watches the live cluster after every step and every
session: per queue what it holds, deserves (proportion's or capacity's
``deserved``, as the last session computed it) and has waiting; per node what
is used; per job when it was submitted, first bound and finished; every
eviction with the work it threw away and the jobs the session pipelined in
its place.  :func:`summarise` turns a :class:`Recording` into the figures:
wait and completion times (p50 / p95 / max), jobs completed, time-weighted
utilisation and share, Jain's fairness index over the queues' shares,
evictions, lost task-seconds, and ping-pong -- queues or jobs whose tasks
were evicted for each other, back and forth, within a window.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from fumarole.runtime.api.resource import Resource
from fumarole.runtime.framework.session import Decisions, Session
from fumarole.runtime.whatif.live import LiveCluster, LiveJob
from fumarole.runtime.whatif.trace import Trace

GIB = float(2 ** 30)
_NOT_MEASURED = ("pods", "ephemeral-storage")
# Plugins whose state holds what each queue deserves, in the order they are asked.
DESERVED_FROM = ("proportion", "capacity")


def in_units(name: str, amount: float) -> float:
    """CPU in cores, memory in GiB, other resources in units (fumarole keeps them in milli-units)."""
    if name == "memory":
        return amount / GIB
    return amount / 1000.0


def _vector(res: Resource | None, dims: Iterable[str]) -> dict[str, float]:
    return {d: (in_units(d, res.get(d)) if res is not None else 0.0) for d in dims}


@dataclass
class Recording:
    """Everything one replay saw, in plain values (picklable, JSON-ready)."""

    trace: str
    bundle: str
    options: dict
    end: float  # virtual seconds played
    wall: float  # wall-clock seconds it took
    sessions: list[float]  # virtual time of each session
    dims: list[str]
    capacity: list[dict]  # {t, <dim>: total allocatable}
    queues: list[dict]  # {t, queue, allocated_<dim>, deserved_<dim>, pending_<dim>, pending_tasks, running_tasks}
    nodes: list[dict]  # {t, node, used_<dim>}, a row when a node's use changes
    jobs: list[dict]  # {job, queue, tasks, submitted, started, finished, deleted, evictions}
    evictions: list[dict]  # {t, session, task, job, queue, reason, lost, for_queues, for_jobs, why}
    node_losses: list[dict] = field(default_factory=list)  # tasks sent back by a node's removal
    stopped: str = "played out"  # why the clock stopped: played out, until, settled, wall-time bound

    @property
    def skipped(self) -> int:
        """Sessions a replay running one every period over the same virtual time would have run on top."""
        period = float(self.options.get("period") or 1.0)
        return max(math.floor(self.end / period + 1e-9) + 1 - len(self.sessions), 0)


class Recorder:
    def __init__(self, trace: Trace, live: LiveCluster, bundle: str, window: float) -> None:
        self.trace, self.live, self.bundle, self.window = trace, live, bundle, window
        self.sessions: list[float] = []
        self.capacity: list[dict] = []
        self.queue_rows: list[dict] = []
        self.node_rows: list[dict] = []
        self.evictions: list[dict] = []
        self.done: list[LiveJob] = []
        self.deserved: dict[str, Resource] = {}
        self._allocatable: dict[int, Resource] = {}  # id(node object) -> its allocatable
        self._node_use: dict[str, tuple] = {}
        self._capacity_seen: tuple | None = None
        self.dims = self._dims()

    def _dims(self) -> list[str]:
        names = {"cpu", "memory"}
        for node in self.trace.cluster.nodes:
            names.update(n for n in (node.get("status") or {}).get("allocatable") or {} if n not in _NOT_MEASURED)
        for event in self.trace.events:
            if event.node is not None:
                names.update(n for n in (event.node.get("status") or {}).get("allocatable") or {}
                             if n not in _NOT_MEASURED)
        return ["cpu", "memory"] + sorted(names - {"cpu", "memory"})

    # -- what the replay tells the recorder ---------------------------------------------
    def completed(self, jobs: list[LiveJob]) -> None:
        self.done.extend(jobs)

    def session(self, now: float, decisions: Decisions, why: dict[str, list[str]]) -> None:
        """A session's decisions, before they are applied (the victims are still running); ``why``:
        each explained eviction's explanation, line by line (empty: not explained)."""
        index = len(self.sessions)
        self.sessions.append(now)
        live = self.live
        for_jobs = sorted(decisions.pipelined)
        for key, reason in decisions.evictions:
            task = live.task(key)
            if task.started is None or task.releasing_until is not None:
                continue
            job = live.jobs[task.job]
            self.evictions.append({
                "t": now, "session": index, "task": key, "job": job.uid, "queue": job.queue, "reason": reason,
                "lost": now - task.started,
                "for_jobs": [j for j in for_jobs if j != job.uid],
                "for_queues": sorted({live.jobs[j].queue for j in for_jobs
                                      if j in live.jobs and live.jobs[j].queue != job.queue}),
                "why": why.get(key, []),
            })

    def sample(self, now: float, session: Session | None, decisions: Decisions | None) -> None:
        """The state after a step: queues, nodes, capacity."""
        if session is not None:
            self._read_deserved(session)
        dims = self.dims
        held: dict[str, Resource] = {}
        waiting: dict[str, Resource] = {}
        counts: dict[str, list[int]] = {}
        used: dict[str, Resource] = {}
        for job in self.live.jobs.values():
            count = counts.setdefault(job.queue, [0, 0])
            for task in job.tasks.values():
                if task.succeeded:
                    continue
                if task.started is None:
                    waiting.setdefault(job.queue, Resource()).add(task.request)
                    count[0] += 1
                else:
                    held.setdefault(job.queue, Resource()).add(task.request)
                    used.setdefault(task.pod["spec"]["nodeName"], Resource()).add(task.request)
                    count[1] += 1
        for queue in sorted({q["metadata"]["name"] for q in self.live.queues} | set(counts)):
            row: dict[str, Any] = {"t": now, "queue": queue}
            for prefix, res in (("allocated", held.get(queue)), ("deserved", self.deserved.get(queue)),
                                ("pending", waiting.get(queue))):
                row.update({f"{prefix}_{d}": v for d, v in _vector(res, dims).items()})
            row["pending_tasks"], row["running_tasks"] = counts.get(queue, [0, 0])
            self.queue_rows.append(row)
        self._sample_nodes(now, used)

    def _read_deserved(self, session: Session) -> None:
        for plugin in DESERVED_FROM:
            deserved = session.plugin_state(plugin).get("deserved")
            if deserved:
                self.deserved = {queue.name: res.clone() for queue, res in deserved.items()}
                return

    def _sample_nodes(self, now: float, used: dict[str, Resource]) -> None:
        dims = self.dims
        total = Resource()
        for obj in self.live.nodes.values():
            total.add(self._allocatable_of(obj))
            name = obj["metadata"]["name"]
            vector = _vector(used.get(name), dims)
            signature = tuple(vector.values())
            if self._node_use.get(name) != signature:
                self._node_use[name] = signature
                self.node_rows.append({"t": now, "node": name, **{f"used_{d}": v for d, v in vector.items()}})
        capacity = _vector(total, dims)
        if tuple(capacity.values()) != self._capacity_seen:
            self._capacity_seen = tuple(capacity.values())
            self.capacity.append({"t": now, **capacity})

    def _allocatable_of(self, obj: dict) -> Resource:
        found = self._allocatable.get(id(obj))
        if found is None:
            found = Resource.from_list((obj.get("status") or {}).get("allocatable") or {})
            self._allocatable[id(obj)] = found
        return found

    def finish(self, end: float, wall: float, options: Any, stopped: str = "played out") -> Recording:
        live = self.live
        jobs = []
        evicted: dict[str, int] = {}
        for e in self.evictions:
            evicted[e["job"]] = evicted.get(e["job"], 0) + 1
        for job in [*self.done, *live.gone, *live.jobs.values()]:
            jobs.append({"job": job.uid, "queue": job.queue, "tasks": len(job.tasks), "submitted": job.submitted,
                         "started": job.first_bound, "finished": job.finished, "deleted": job.deleted,
                         "evictions": evicted.get(job.uid, 0)})
        losses = [asdict(lost) for lost in live.lost if not lost.eviction]
        return Recording(self.trace.name, self.bundle, asdict(options), end, wall, self.sessions, self.dims,
                         self.capacity, self.queue_rows, self.node_rows, jobs, self.evictions, losses, stopped)


# -- figures -------------------------------------------------------------------------------

def percentile(values: list[float], p: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100.0
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _spread(values: list[float]) -> dict[str, float | None]:
    return {"p50": percentile(values, 50), "p95": percentile(values, 95), "max": max(values, default=None)}


def time_weighted_mean(points: list[tuple[float, float]], end: float) -> float | None:
    """Mean of a step function: each (t, value) holds until the next point, the last until ``end``.
    A point repeating the value before it is no step: dropped, so the sum does not depend on how often
    one state was sampled (a replay that skips idle sessions measures what one every period does)."""
    if not points:
        return None
    points = [p for i, p in enumerate(points) if i == 0 or p[1] != points[i - 1][1]]
    total = span = 0.0
    for (t, value), (t_next, _) in zip(points, [*points[1:], (max(end, points[-1][0]), 0.0)]):
        total += value * (t_next - t)
        span += t_next - t
    return total / span if span > 0 else points[-1][1]


def queue_share(row: dict, dims: list[str]) -> float | None:
    """Proportion's share: the largest allocated / deserved over the dimensions deserved names."""
    named = [d for d in dims if row[f"deserved_{d}"] > 0]
    if not named:
        return None
    return max(row[f"allocated_{d}"] / row[f"deserved_{d}"] for d in named)


def jain_index(shares: list[float]) -> float | None:
    """(sum x)^2 / (n sum x^2): 1 when every queue has the same share of what it deserves."""
    squares = sum(x * x for x in shares)
    return None if not shares or squares == 0 else sum(shares) ** 2 / (len(shares) * squares)


def _by_time(rows: list[dict]) -> dict[float, list[dict]]:
    out: dict[float, list[dict]] = {}
    for row in rows:
        out.setdefault(row["t"], []).append(row)
    return out


def _job_figures(jobs: list[dict]) -> dict[str, Any]:
    waits = [j["started"] - j["submitted"] for j in jobs if j["started"] is not None]
    completions = [j["finished"] - j["submitted"] for j in jobs if j["finished"] is not None]
    return {"jobsSubmitted": len(jobs), "jobsCompleted": len(completions),
            "jobsNeverStarted": sum(1 for j in jobs if j["started"] is None),
            "waitSeconds": _spread(waits), "completionSeconds": _spread(completions)}


def _eviction_figures(evictions: list[dict]) -> dict[str, Any]:
    return {"evictions": len(evictions), "lostTaskSeconds": sum(e["lost"] for e in evictions)}


def ping_pong(evictions: list[dict], side: str, window: float) -> list[dict]:
    """Pairs (of queues, or of jobs) whose tasks were evicted for each other within ``window`` seconds.

    An eviction of a task of X in a session that pipelined work of Y is an edge
    X -> Y; an edge Y -> X at most ``window`` seconds after an edge X -> Y is
    one reversal.  Each pair is listed with the sessions of its reversals.
    """
    edges = [(e["t"], e["session"], e[side], other)
             for e in evictions for other in e["for_queues" if side == "queue" else "for_jobs"]]
    last: dict[tuple[str, str], tuple[float, int]] = {}
    found: dict[tuple[str, str], list[dict]] = {}
    for t, session, victim, winner in sorted(edges):
        back = last.get((winner, victim))
        if back is not None and t - back[0] <= window and back[1] != session:
            pair = tuple(sorted((victim, winner)))
            found.setdefault(pair, []).append({"from": {"t": back[0], "session": back[1], "evicted": winner},
                                               "to": {"t": t, "session": session, "evicted": victim}})
        last[(victim, winner)] = (t, session)
    return [{"between": list(pair), "reversals": len(items), "episodes": items}
            for pair, items in sorted(found.items())]


def summarise(rec: Recording) -> dict[str, Any]:
    """metrics.json: overall and per-queue figures, and the ping-pong found."""
    window = rec.options.get("pingpong_window", 600.0)
    dims = rec.dims
    samples = _by_time(rec.queues)
    capacity_points = {d: [(row["t"], row[d]) for row in rec.capacity] for d in dims}
    used_points: dict[str, list[tuple[float, float]]] = {d: [] for d in dims}
    fairness: list[tuple[float, float]] = []
    for t, rows in samples.items():
        for d in dims:
            used_points[d].append((t, sum(r[f"allocated_{d}"] for r in rows)))
        index = jain_index([s for s in (queue_share(r, dims) for r in rows) if s is not None])
        if index is not None:
            fairness.append((t, index))
    utilisation = {}
    for d in dims:
        used, capacity = time_weighted_mean(used_points[d], rec.end), time_weighted_mean(capacity_points[d], rec.end)
        utilisation[d] = used / capacity if used is not None and capacity else None
    overall = {**_job_figures(rec.jobs), **_eviction_figures(rec.evictions), "utilisation": utilisation,
               "fairness": time_weighted_mean(fairness, rec.end)}
    queues = {}
    for name in sorted({r["queue"] for r in rec.queues} | {j["queue"] for j in rec.jobs}):
        rows = [r for r in rec.queues if r["queue"] == name]
        shares = [(r["t"], s) for r in rows if (s := queue_share(r, dims)) is not None]
        queues[name] = {**_job_figures([j for j in rec.jobs if j["queue"] == name]),
                        **_eviction_figures([e for e in rec.evictions if e["queue"] == name]),
                        "meanShare": time_weighted_mean(shares, rec.end),
                        "meanAllocated": {d: time_weighted_mean([(r["t"], r[f"allocated_{d}"]) for r in rows],
                                                                rec.end) for d in dims},
                        "meanDeserved": {d: time_weighted_mean([(r["t"], r[f"deserved_{d}"]) for r in rows],
                                                               rec.end) for d in dims}}
    return {"trace": rec.trace, "bundle": rec.bundle, "options": rec.options,
            "virtualSeconds": rec.end, "wallSeconds": rec.wall,
            "speed": rec.end / rec.wall if rec.wall > 0 else None, "sessions": len(rec.sessions),
            "sessionsSkipped": rec.skipped, "stoppedBy": rec.stopped,
            "overall": overall, "queues": queues,
            "pingPong": {"queues": ping_pong(rec.evictions, "queue", window),
                         "jobs": ping_pong(rec.evictions, "job", window)},
            "nodeLosses": len(rec.node_losses)}
