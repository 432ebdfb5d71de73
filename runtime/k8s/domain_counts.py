"""Inter-pod affinity and topology spread from counts of matching pods per node (the fast engine).

Kubernetes' InterPodAffinity and PodTopologySpread do not scan the cluster per
node: their pre-filters count, once per pod, the matching pods per topology
domain, and the filters and scorers read those counts.  :class:`PodCounts` is
that state kept current for a whole session: for each question asked so far
(a selector, a term held by placed pods) a count of the matching pods per node
row, updated as the session places and removes pods, summed per domain over
the node columns when a task asks.  The answers are the reference engine's
(``K8sView``'s per-node scans, which stay the definition): the same verdicts,
reasons and scores, for every node at once.

A :class:`PodView` taken by a task's pre-predicate is the live view plus the
changes since (the live placements it no longer sees, and a dry run's simulate
hooks): its counts are the live counts with those few pods taken out and put
back (:meth:`PodCounts.adjustments`).
"""

from __future__ import annotations

import math
import weakref
from typing import Callable, Iterable

import numpy as np

from fumarole.runtime.api.labels import Requirement, selects
from fumarole.runtime.api.model import Node, Task
from fumarole.runtime.k8s import interpodaffinity, nodeaffinity, podspec, podtopologyspread, tainttoleration
from fumarole.runtime.k8s.view import PodView

Entry = tuple[int, Task]  # where a pod sits: its node's row, and the pod
Adjustment = tuple[int, Task, int]  # a pod at a row counted once more (+1) or once less (-1)


def _selector_key(selector: list[Requirement] | None) -> tuple | None:
    return None if selector is None else tuple(selector)


def _term_key(term: "interpodaffinity.PodTerm") -> tuple:
    """What a term's match depends on (not its topology key or weight)."""
    return (_selector_key(term.selector), term.namespaces, _selector_key(term.namespace_selector))


def _bucket(selector: list[Requirement] | None) -> tuple[str, str] | tuple[()] | None:
    """The label every selected pod carries as (key, value) pairs, from the first ``In`` requirement
    (its values, one bucket each, are returned by :func:`_buckets`); () when no requirement says."""
    if selector is None:
        return None
    for key, op, values in selector:
        if op == "In":
            return key, values  # type: ignore[return-value]
    return ()


def _buckets(selector: list[Requirement] | None) -> list[tuple[str, str]] | None:
    """The (label, value) buckets a selector's pods fall in; None: any pod may match; []: none does."""
    found = _bucket(selector)
    if found is None:
        return []
    if found == ():
        return None
    key, values = found
    return [(key, value) for value in values]


class _Counted:
    """Pods matching one question, counted per node row."""

    __slots__ = ("matches", "counts")

    def __init__(self, matches: Callable[[Task], bool], size: int) -> None:
        self.matches, self.counts = matches, np.zeros(size)


class _Held:
    """Placed pods holding one (anti-)affinity term of their own, counted per node row."""

    __slots__ = ("kind", "key", "term", "counts")

    def __init__(self, kind: str, key: tuple, term: "interpodaffinity.PodTerm", size: int) -> None:
        self.kind, self.key, self.term, self.counts = kind, key, term, np.zeros(size)


# The terms of a placed pod that reach other pods: (kind, parsed terms), in the scorer's order.
# Its required affinity terms reach nobody: they neither refuse nor score (no hard pod affinity
# weight in Volcano, see interpodaffinity.inter_pod_affinity_scores).
def _held_terms(pod: Task) -> list[tuple[str, tuple, "interpodaffinity.PodTerm"]]:
    key = ("domain_counts.held",)
    held = pod.derived.get(key)
    if held is None:
        held = []
        for kind, terms in (("required-anti", interpodaffinity.required_terms(pod, "podAntiAffinity", False)),
                            ("preferred-affinity", interpodaffinity.preferred_terms(pod, "podAffinity", False)),
                            ("preferred-anti", interpodaffinity.preferred_terms(pod, "podAntiAffinity", False))):
            for t in terms:
                held.append((kind, (kind, _term_key(t), t.topology_key, t.weight), t))
        pod.derived[key] = held
    return held


class PodCounts:
    """The live view's pods counted per node row, for each question asked so far."""

    def __init__(self, nodes: list[Node]) -> None:
        self.nodes = nodes
        self.size = len(nodes)
        self.rows = {node.name: i for i, node in enumerate(nodes)}
        self.where: dict[str, Entry] = {}
        self._affinity_pods = 0  # placed pods with pod (anti-)affinity terms
        self._by_label: dict[tuple[str, str], set[str]] = {}
        for row, node in enumerate(nodes):
            for key, pod in node.view_pods.items():
                self._file(key, (row, pod))
        self._counted: dict[object, _Counted] = {}
        self._counted_buckets: dict[tuple[str, str], list[_Counted]] = {}
        self._counted_anywhere: list[_Counted] = []
        self._held: dict[tuple, _Held] | None = None
        self._held_buckets: dict[tuple[str, str], list[_Held]] = {}
        self._held_anywhere: list[_Held] = []
        self._codes: dict[str, tuple[np.ndarray, np.ndarray, int]] = {}
        self._static: dict[object, np.ndarray] = {}
        self._views: weakref.WeakSet[PodView] = weakref.WeakSet()
        self.version = 0  # changes of the live view: answers over it are kept for one version
        self._live_answers: tuple[int, dict] = (0, {})

    # -- the live view -----------------------------------------------------------------
    def _file(self, key: str, entry: Entry) -> None:
        self.where[key] = entry
        self._affinity_pods += interpodaffinity.has_pod_affinity(entry[1])
        for label, value in entry[1].labels.items():
            self._by_label.setdefault((label, str(value)), set()).add(key)

    def _unfile(self, key: str, entry: Entry) -> None:
        del self.where[key]
        self._affinity_pods -= interpodaffinity.has_pod_affinity(entry[1])
        for label, value in entry[1].labels.items():
            self._by_label.get((label, str(value)), set()).discard(key)

    def placed(self, task: Task, node: Node) -> None:
        """``task`` now sits on ``node`` in the live view (replacing what had its key)."""
        row = self.rows.get(node.name)
        old = self.where.get(task.key)
        self._changing(task.key, old)
        if old is not None:
            self._unfile(task.key, old)
            self._count(old, -1)
        if row is not None:
            entry = (row, task)
            self._file(task.key, entry)
            self._count(entry, 1)

    def removed(self, task: Task) -> None:
        old = self.where.get(task.key)
        if old is not None:
            self._changing(task.key, old)
            self._unfile(task.key, old)
            self._count(old, -1)

    def _changing(self, key: str, old: Entry | None) -> None:
        """Views taken earlier keep seeing ``key`` where it was."""
        self.version += 1
        for view in self._views:
            view.keep(key, old)

    def _count(self, entry: Entry, sign: int) -> None:
        row, pod = entry
        for counted in self._counted_for(pod):
            if counted.matches(pod):
                counted.counts[row] += sign
        if self._held is not None and interpodaffinity.has_pod_affinity(pod):
            for kind, key, term in _held_terms(pod):
                self._holding(kind, key, term).counts[row] += sign

    def _holding(self, kind: str, key: tuple, term: "interpodaffinity.PodTerm") -> _Held:
        """The holders of a term, filed the first time a pod holds it."""
        held = self._held.get(key)
        if held is None:
            held = self._held[key] = _Held(kind, key, term, self.size)
            buckets = _buckets(term.selector)
            if buckets is None:
                self._held_anywhere.append(held)
            for bucket in buckets or ():
                self._held_buckets.setdefault(bucket, []).append(held)
        return held

    def _counted_for(self, pod: Task) -> Iterable[_Counted]:
        yield from self._counted_anywhere
        for label, value in pod.labels.items():
            yield from self._counted_buckets.get((label, str(value)), ())

    def any_affinity(self, delta: dict[str, Entry | None]) -> bool:
        """Whether some pod of a view differing by ``delta`` has pod (anti-)affinity terms."""
        count = self._affinity_pods
        for key, seen in delta.items():
            live = self.where.get(key)
            count += (seen is not None and interpodaffinity.has_pod_affinity(seen[1])) - (
                live is not None and interpodaffinity.has_pod_affinity(live[1]))
        return count > 0

    # -- counts of pods matching a question ------------------------------------------------
    def matching(self, question: object, matches: Callable[[Task], bool], selector: list[Requirement] | None,
                 adjust: list[Adjustment]) -> np.ndarray:
        """Per node row, the pods that ``matches`` picks (``selector`` bounds them: a pod it does not
        select is never picked), with ``adjust`` applied."""
        counted = self._counted.get(question)
        if counted is None:
            counted = self._counted[question] = _Counted(matches, self.size)
            buckets = _buckets(selector)
            if buckets is None:
                self._counted_anywhere.append(counted)
                candidates: Iterable[Entry] = self.where.values()
            else:
                keys: set[str] = set()
                for bucket in buckets:
                    self._counted_buckets.setdefault(bucket, []).append(counted)
                    keys |= self._by_label.get(bucket, set())
                candidates = [self.where[key] for key in keys]
            for row, pod in candidates:
                if matches(pod):
                    counted.counts[row] += 1
        return _adjusted(counted.counts, counted.matches, adjust)

    def held_by_others(self, task: Task, kinds: tuple[str, ...], adjust: list[Adjustment]) -> list[tuple[_Held, np.ndarray]]:
        """The terms of ``kinds`` held by placed pods that ``task`` matches, with their holders per row."""
        if self._held is None:
            self._held = {}
            for row, pod in self.where.values():
                if interpodaffinity.has_pod_affinity(pod):
                    for kind, key, term in _held_terms(pod):
                        self._holding(kind, key, term).counts[row] += 1
        for _row, pod, _sign in adjust:  # a pod only a view sees may hold terms nobody else does
            if interpodaffinity.has_pod_affinity(pod):
                for kind, key, term in _held_terms(pod):
                    self._holding(kind, key, term)
        out = []
        candidates = list(self._held_anywhere)
        for label, value in task.labels.items():
            candidates += self._held_buckets.get((label, str(value)), ())
        for held in candidates:
            if held.kind in kinds and held.term.matches(task):
                out.append((held, _adjusted_held(held, adjust)))
        return out

    # -- node columns ------------------------------------------------------------------
    def codes(self, label: str) -> tuple[np.ndarray, np.ndarray, int]:
        """Per row the index of the node's value of ``label`` (0 where it has none), whether it has
        the label, and how many distinct values there are."""
        found = self._codes.get(label)
        if found is None:
            values: dict[object, int] = {}
            codes = np.zeros(self.size, dtype=np.int64)
            has = np.zeros(self.size, dtype=bool)
            for row, node in enumerate(self.nodes):
                if label in node.labels:
                    codes[row] = values.setdefault(node.labels[label], len(values))
                    has[row] = True
            found = self._codes[label] = (codes, has, len(values))
        return found

    def per_domain(self, label: str, counts: np.ndarray, counted: np.ndarray | None = None) -> np.ndarray:
        """Per domain of ``label``, the sum of ``counts`` over the rows of ``counted`` (default: every
        row with the label)."""
        codes, has, size = self.codes(label)
        rows = has if counted is None else counted
        return np.bincount(codes[rows], weights=counts[rows], minlength=size)

    def at_rows(self, label: str, per_domain: np.ndarray) -> np.ndarray:
        """Each row's domain's value (0 for a row without the label)."""
        codes, has, size = self.codes(label)
        return np.where(has, per_domain[codes], 0.0) if size else np.zeros(self.size)

    def static(self, question: object, fact: Callable[[Node], bool]) -> np.ndarray:
        column = self._static.get(question)
        if column is None:
            column = self._static[question] = np.fromiter((bool(fact(n)) for n in self.nodes), dtype=bool,
                                                          count=self.size)
        return column

    # -- views ----------------------------------------------------------------------------
    def view(self) -> "PodView":
        """A view of the placements as they are now, kept so while the live view changes."""
        view = PodView.tracking(self)
        self._views.add(view)
        return view

    def adjustments(self, delta: dict[str, Entry | None], task: Task) -> list[Adjustment]:
        """What turns the live counts into those of a view that differs by ``delta`` (pod key -> where
        the view has it, None: not at all), without ``task`` itself."""
        out: list[Adjustment] = []
        for key, seen in delta.items():
            live = self.where.get(key)
            if live is seen or (live is not None and seen is not None and live[0] == seen[0] and live[1] is seen[1]):
                continue
            if live is not None:
                out.append((live[0], live[1], -1))
            if seen is not None:
                out.append((seen[0], seen[1], 1))
        own = delta[task.key] if task.key in delta else self.where.get(task.key)
        if own is not None:
            out.append((own[0], own[1], -1))
        return out


def _adjusted(counts: np.ndarray, matches: Callable[[Task], bool], adjust: list[Adjustment]) -> np.ndarray:
    picked = [(row, sign) for row, pod, sign in adjust if matches(pod)]
    if not picked:
        return counts
    counts = counts.copy()
    for row, sign in picked:
        counts[row] += sign
    return counts


def _adjusted_held(held: _Held, adjust: list[Adjustment]) -> np.ndarray:
    counts = held.counts
    copied = False
    for row, pod, sign in adjust:
        if not interpodaffinity.has_pod_affinity(pod):
            continue
        for _kind, key, _term in _held_terms(pod):
            if key == held.key:
                if not copied:
                    counts, copied = counts.copy(), True
                counts[row] += sign
    return counts


# -- the filters and scorers over every row ---------------------------------------------------

Rows = Callable[[PodCounts, Task, list[Adjustment]], np.ndarray]


def answer(counts: PodCounts | None, rows: Rows, task: Task, view: "PodView | None") -> np.ndarray | None:
    """``rows`` (:func:`affinity_reasons`, :func:`spread_reasons`) for ``task`` over the live view
    (``view`` None) or a view taken from ``counts``, kept until the view changes; None when there
    are no counts or the view is a copy."""
    if counts is None:
        return None
    if view is None:
        version, answers = counts._live_answers
        if version != counts.version:
            answers = {}
            counts._live_answers = (counts.version, answers)
        delta: dict[str, Entry | None] = {}
        key: tuple = (rows, task.key)
    else:
        if view.counts is not counts:
            return None
        answers, delta, key = view.answers, view.delta, (rows, task.key, view.version)
    found = answers.get(key)
    if found is None:
        found = answers[key] = rows(counts, task, counts.adjustments(delta, task))
        answers[key + ("somewhere",)] = bool((found != None).any())  # noqa: E711 - element-wise
    return found


def refuses_somewhere(counts: PodCounts | None, rows: Rows, task: Task, view: "PodView | None") -> bool | None:
    """Whether :func:`answer` refuses ``task`` on some row (None: no answer)."""
    if answer(counts, rows, task, view) is None:
        return None
    answers, key = (counts._live_answers[1], (rows, task.key)) if view is None else (
        view.answers, (rows, task.key, view.version))
    return answers[key + ("somewhere",)]


def _first(out: np.ndarray, lanes: np.ndarray, reason: str) -> None:
    """Rows of ``lanes`` without a reason yet get ``reason``."""
    out[np.logical_and(lanes, out == None)] = reason  # noqa: E711 - element-wise


def affinity_reasons(counts: PodCounts, task: Task, adjust: list[Adjustment]) -> np.ndarray:
    """K8sView.pod_affinity_failure for every row: the reason, or None."""
    out = np.full(counts.size, None, dtype=object)
    affinity = interpodaffinity.required_terms(task, "podAffinity", True)
    if affinity:
        question = ("all-of", tuple(_term_key(t) for t in affinity))
        rows = counts.matching(question, lambda pod: all(t.matches(pod) for t in affinity),
                               affinity[0].selector, adjust)
        missing = np.zeros(counts.size, dtype=bool)
        empty = np.zeros(counts.size, dtype=bool)
        anywhere = False
        for t in affinity:
            _codes, has, _ = counts.codes(t.topology_key)
            missing |= ~has
            per_domain = counts.per_domain(t.topology_key, rows)
            anywhere = anywhere or bool(per_domain.sum() > 0)
            empty |= np.logical_and(has, counts.at_rows(t.topology_key, per_domain) <= 0)
        _first(out, missing, interpodaffinity.AFFINITY_FAILURE)
        if anywhere or not all(t.matches(task) for t in affinity):
            _first(out, empty, interpodaffinity.AFFINITY_FAILURE)
    conflict = np.zeros(counts.size, dtype=bool)
    for t in interpodaffinity.required_terms(task, "podAntiAffinity", True):
        rows = counts.matching(("term", _term_key(t)), t.matches, t.selector, adjust)
        conflict |= counts.at_rows(t.topology_key, counts.per_domain(t.topology_key, rows)) > 0
    _first(out, conflict, interpodaffinity.ANTI_AFFINITY_FAILURE)
    existing = np.zeros(counts.size, dtype=bool)
    for held, rows in counts.held_by_others(task, ("required-anti",), adjust):
        label = held.term.topology_key
        existing |= counts.at_rows(label, counts.per_domain(label, rows)) > 0
    _first(out, existing, interpodaffinity.EXISTING_ANTI_AFFINITY_FAILURE)
    return out


def _spread_matching(counts: PodCounts, task: Task, c: "podtopologyspread.SpreadConstraint",
                     adjust: list[Adjustment]) -> np.ndarray:
    """Per row, the pods of the task's namespace, not terminating, that the constraint selects."""
    if c.selector == [] or c.selector is None:
        return np.zeros(counts.size)
    namespace, selector = task.namespace, c.selector
    return counts.matching(("spread", namespace, _selector_key(selector)),
                           lambda pod: pod.namespace == namespace and not podspec.terminating(pod)
                           and selects(selector, pod.labels), selector, adjust)


def _counted_nodes(counts: PodCounts, task: Task, constraints: list) -> list[np.ndarray]:
    """Per constraint, the rows whose pods count: every constraint key, and the inclusion policies."""
    every_key = np.ones(counts.size, dtype=bool)
    for c in constraints:
        every_key &= counts.codes(c.topology_key)[1]
    out = []
    for c in constraints:
        rows = every_key
        if c.honor_node_affinity:
            rows = rows & counts.static(("selection", nodeaffinity.node_selection_text(task)),
                                        lambda n: nodeaffinity.matches_node_selector_and_affinity(task, n))
        if c.honor_node_taints:
            rows = rows & ~counts.static(("untolerated", tainttoleration.tolerations_text(task)),
                                         lambda n: tainttoleration.untolerated_taint(
                                             task, n, list(tainttoleration.DO_NOT_SCHEDULE_EFFECTS)) is not None)
        out.append(rows)
    return out


def spread_reasons(counts: PodCounts, task: Task, adjust: list[Adjustment]) -> np.ndarray:
    """K8sView.topology_spread_failure for every row: the reason, or None."""
    out = np.full(counts.size, None, dtype=object)
    constraints = podtopologyspread.spread_constraints(task, "DoNotSchedule")
    for c, counted in zip(constraints, _counted_nodes(counts, task, constraints)):
        codes, has, size = counts.codes(c.topology_key)
        per_domain = counts.per_domain(c.topology_key, _spread_matching(counts, task, c, adjust), counted)
        present = np.bincount(codes[counted], minlength=size) > 0
        domains = int(present.sum())
        minimum = 0 if domains < c.min_domains else (int(per_domain[present].min()) if domains else 2**31 - 1)
        own = 1 if selects(c.selector, task.labels) else 0
        _first(out, ~has, podtopologyspread.SPREAD_LABEL_FAILURE)
        _first(out, np.logical_and(has, counts.at_rows(c.topology_key, per_domain) + own - minimum > c.max_skew),
               podtopologyspread.SPREAD_FAILURE)
    return out


def inter_pod_affinity_raw(counts: PodCounts, task: Task) -> np.ndarray | None:
    """K8sView.inter_pod_affinity_scores before normalising: each row's raw score (None: skip)."""
    adjust = counts.adjustments({}, task)
    by_label: dict[str, np.ndarray] = {}
    contributed = False

    def add(label: str, rows: np.ndarray, weight: int) -> None:
        nonlocal contributed
        has = counts.codes(label)[1]
        if rows[has].any():
            contributed = True
            by_label[label] = by_label.get(label, 0.0) + rows * weight

    for sign, kind in ((1, "podAffinity"), (-1, "podAntiAffinity")):
        for t in interpodaffinity.preferred_terms(task, kind, True):
            add(t.topology_key, counts.matching(("term", _term_key(t)), t.matches, t.selector, adjust), sign * t.weight)
    signs = {"preferred-affinity": 1, "preferred-anti": -1}
    for held, rows in counts.held_by_others(task, tuple(signs), adjust):
        add(held.term.topology_key, rows, signs[held.kind] * held.term.weight)
    if not contributed:
        return None
    raw = np.zeros(counts.size)
    for label, rows in by_label.items():
        raw = raw + counts.at_rows(label, counts.per_domain(label, rows))
    return raw


def normalised_affinity(raw: np.ndarray) -> np.ndarray:
    """InterPodAffinity's min-max normalisation over the candidates' raw scores."""
    if len(raw) == 0:
        return raw
    low, high = raw.min(), raw.max()
    spread = high - low
    if spread <= 0:
        return np.zeros(len(raw))
    return np.trunc(podspec.MAX_NODE_SCORE * ((raw - low) / spread))


def spread_scores(counts: PodCounts, task: Task, candidates: np.ndarray) -> np.ndarray | None:
    """K8sView.topology_spread_scores for the candidate rows (None: skip)."""
    constraints = podtopologyspread.spread_constraints(task, "ScheduleAnyway")
    if not constraints or not counts.size:
        return None
    adjust = counts.adjustments({}, task)
    scored = np.ones(len(candidates), dtype=bool)
    for c in constraints:
        scored &= counts.codes(c.topology_key)[1][candidates]
    scored_rows = candidates[scored]
    total = np.zeros(len(scored_rows))
    for c, counted in zip(constraints, _counted_nodes(counts, task, constraints)):
        codes, _has, size = counts.codes(c.topology_key)
        matching = _spread_matching(counts, task, c, adjust)
        if c.topology_key == podtopologyspread.HOSTNAME_LABEL:
            weight = math.log(len(scored_rows) + 2)
            matched = matching[scored_rows]
        else:
            values = len(np.unique(codes[scored_rows]))
            weight = math.log(values + 2)
            matched = np.bincount(codes[counted], weights=matching[counted], minlength=size)[codes[scored_rows]]
        total = total + (matched * weight + (c.max_skew - 1))
    raw = _go_round(total)
    out = np.zeros(len(candidates))
    if len(raw):
        high, low = int(raw.max()), int(raw.min())
        out[scored] = podspec.MAX_NODE_SCORE if high == 0 else (podspec.MAX_NODE_SCORE * (high + low - raw)) // high
    return out


def _go_round(x: np.ndarray) -> np.ndarray:
    """Go's math.Round lane by lane: half away from zero."""
    whole = np.trunc(x)
    return (whole + np.where(np.abs(x - whole) >= 0.5, np.sign(x), 0.0)).astype(np.int64)
