"""How a hook combines the answers of the plugins that implement it.

``policies/volcano/hooks.yaml`` names one combinator per dispatcher; each
function here takes the enabled plugin functions grouped by tier and returns
the session function policies call.  The semantics are Volcano's dispatchers
in ``framework/session_plugins.go`` (docs/hooks.md restates them).
"""

from __future__ import annotations

import sys
from typing import Callable

Tiers = list[list[Callable]]  # enabled plugin functions, tier by tier, in configuration order
ABSTAIN = 0  # a plugin's vote: 1 permit, 0 abstain, -1 reject


def _flat(tiers: Tiers) -> list[Callable]:
    return [fn for tier in tiers for fn in tier]


def order(tiers: Tiers, fallback: Callable) -> Callable:
    """First non-zero plugin comparison decides (< 0: left first); else the fallback."""
    fns = _flat(tiers)
    if not fns:
        return fallback
    if len(fns) == 1:
        only = fns[0]

        def less_one(*args) -> bool:
            c = only(*args)
            return c < 0 if c != 0 else fallback(*args)
        return less_one

    def less(*args) -> bool:
        for fn in fns:
            c = fn(*args)
            if c != 0:
                return c < 0
        return fallback(*args)
    return less


def compare(tiers: Tiers) -> Callable:
    """First non-zero plugin comparison, 0 when none decides (no fallback)."""
    fns = _flat(tiers)
    if not fns:
        def undecided(*args) -> int:
            return 0
        return undecided

    def cmp(*args) -> int:
        for fn in fns:
            c = fn(*args)
            if c != 0:
                return c
        return 0
    return cmp


def intersect(tiers: Tiers) -> Callable:
    """Tiered intersection of victims (Preemptable / Reclaimable).

    Every plugin sees the full candidate list.  An abstaining plugin is skipped;
    an empty answer ends the tier undecided; an empty intersection becomes
    undecided again and a later plugin of the tier re-initialises it.  The first
    tier that ends decided wins.
    """
    def victims(actor, candidates) -> list:
        result = None
        for tier in tiers:
            for chosen in _answers(tier, actor, candidates):
                if not chosen:
                    result = None
                    break
                result = list(chosen) if result is None else (_among(result, chosen) or None)
            if result is not None:
                return result
        return []
    return victims


def intersect_all(tiers: Tiers) -> Callable:
    """Every plugin that answers must agree: the intersection over all tiers, and an
    empty answer vetoes.  Not Volcano's rule; a bundle chooses it when a site policy
    must be able to protect tasks (Volcano's `intersect` lets a later tier decide)."""
    def victims(actor, candidates) -> list:
        result = None
        for tier in tiers:
            for chosen in _answers(tier, actor, candidates):
                result = _among(candidates if result is None else result, chosen)
                if not result:
                    return []
        return result or []
    return victims


def veto(deciders: Tiers, vetoes: list[Callable]) -> Callable:
    """Volcano's tiered intersection over the deciding plugins, then every veto plugin removes
    what it does not name.

    The deciders (Volcano's plugins) choose exactly as under ``intersect``; each veto plugin,
    wherever it is listed, is then asked about the victims chosen so far (in their order) and
    keeps only those it names: an empty answer removes them all, abstaining removes nothing.
    A veto never adds a victim and never hands the decision to another tier.
    """
    decide = intersect(deciders)
    if not vetoes:
        return decide

    def victims(*args) -> list:
        *head, candidates = args
        result = decide(*head, candidates)
        for fn in vetoes:
            if not result:
                return []
            allowed, vote = fn(*head, result)
            if vote != ABSTAIN:
                result = _among(result, allowed)
        return result
    return victims


def _answers(tier: list[Callable], actor, candidates):
    """The victims each plugin of a tier chose, skipping the plugins that abstained."""
    for fn in tier:
        chosen, vote = fn(actor, candidates)
        if vote != ABSTAIN:
            yield chosen


def _among(tasks: list, chosen: list) -> list:
    """``tasks`` (in their order) that are also in ``chosen``."""
    keep = {id(t) for t in chosen}
    return [t for t in tasks if id(t) in keep]


def tier_bound(tiers: list[list[Callable | None]]) -> Callable:
    """A bound of a tiered intersection (``intersect``) from its plugins' own bounds: false only
    when the intersection can name no victim.

    ``tiers`` holds, tier by tier, every plugin taking part in the bounded hook: its bound
    function, or None when it has none (it may name anything).  A tier decides only when none
    of its plugins answers an empty list (an empty answer ends the tier undecided), so it may
    name a victim only while every plugin's bound holds; a tier without plugins never decides.
    True when some tier may.
    """
    bounded: list[list[Callable]] = []
    for tier in tiers:
        if tier:
            bounds = [fn for fn in tier if fn is not None]
            if not bounds:  # a tier whose plugins have no bound may always name victims
                return all_([])
            bounded.append(bounds)

    def may(*args) -> bool:
        for bounds in bounded:
            for fn in bounds:
                if not fn(*args):
                    break
            else:
                return True
        return False
    return may


def sum_bound(tiers: list[list[Callable | None]]) -> Callable:
    """A bound of one key's score under a per-key sum (``sum-by-key``) from its plugins' own
    bounds: the sum of the bounds of every plugin taking part in the bounded hook; unbounded
    (the largest float) when one of them has no bound or answers none.

    ``tiers`` is as for ``tier_bound``."""
    taking_part = [fn for tier in tiers for fn in tier]
    bounds = [fn for fn in taking_part if fn is not None]
    if len(bounds) < len(taking_part):
        return unbounded

    def most(*args) -> float:
        total = 0.0
        for fn in bounds:
            part = fn(*args)
            if part is None:
                return sys.float_info.max
            total += part
        return total
    return most


def unbounded(*_args) -> float:
    """A ``sum-bound`` that bounds nothing."""
    return sys.float_info.max


BOUNDED_COMBINE = {"all": "all", "tier-bound": "intersect", "sum-bound": "sum-by-key"}
"""A bound's combinator -> the combinator the hook it bounds must have for the bound to hold
(a dispatcher's ``bounds`` in hooks.yaml); under any other a bool bound answers true and a
``sum-bound`` the largest float."""


def vote(tiers: Tiers) -> Callable:
    """Any Reject in an evaluated tier wins; a tier with a Permit ends the walk; nobody: true."""
    def decide(*args) -> bool:
        for tier in tiers:
            permitted = False
            for fn in tier:
                r = fn(*args)
                if r < 0:
                    return False
                if r > 0:
                    permitted = True
            if permitted:
                return True
        return True
    return decide


def any_(tiers: Tiers) -> Callable:
    """OR over every enabled plugin; false when none."""
    return _fold(_flat(tiers), any, False)


def all_(tiers: Tiers) -> Callable:
    """AND over every enabled plugin in every tier; true when none."""
    return _fold(_flat(tiers), all, True)


def first_tier_all(tiers: Tiers) -> Callable:
    """The first tier with an enabled plugin decides (AND within it); false when none (JobStarving)."""
    first = next((tier for tier in tiers if tier), None)
    return _fold(first or [], all, False)


def _fold(fns: list[Callable], fold: Callable, nobody: bool) -> Callable:
    """``fold`` (``any`` / ``all``) over the plugins' answers, short-circuiting as it does.

    Hooks such as ``preempt_candidate`` are asked once per (preemptor, task on a node) and
    usually have no plugin or one, so those cases skip the generator ``fold`` would walk.
    """
    if not fns:
        def nobody_answers(*args) -> bool:
            return nobody
        return nobody_answers
    if len(fns) == 1:
        only = fns[0]

        def one_answers(*args) -> bool:
            return True if only(*args) else False
        return one_answers
    return lambda *args: fold(fn(*args) for fn in fns)


def first_failure(tiers: Tiers) -> Callable:
    """The first plugin that fails decides; later plugins are not run."""
    fns = _flat(tiers)
    if len(fns) == 1:
        only = fns[0]

        def check_one(*args):
            return only(*args)
        return check_one

    def check(*args):
        for fn in fns:
            failure = fn(*args)
            if failure is not None:
                return failure
        return None
    return check


def chain(first: Callable, then: Callable) -> Callable:
    """One plugin's two failure hooks as one answer: ``first``'s failure, or when it passes ``then``'s
    (a ``then`` dispatcher in hooks.yaml)."""
    def check(*args):
        failure = first(*args)
        return failure if failure is not None else then(*args)
    return check


def sum_(tiers: Tiers) -> Callable:
    """Sum of scores; a plugin answering none (Volcano's error) makes the whole score 0."""
    fns = _flat(tiers)

    def score(*args) -> float:
        total = 0.0
        for fn in fns:
            part = fn(*args)
            if part is None:
                return 0.0
            total += part
        return total
    return score


def sum_by_key(tiers: Tiers) -> Callable:
    """Per-key sum of plugin maps; a plugin answering none (an error) makes the whole answer none."""
    fns = _flat(tiers)

    def scores(*args):
        total: dict = {}
        for fn in fns:
            part = fn(*args)
            if part is None:
                return None
            for key, value in part.items():
                total[key] = total.get(key, 0.0) + value
        return total
    return scores


def first_answer(tiers: Tiers) -> Callable:
    """The first enabled plugin answers alone (HyperNodeGradientFor...Fn); nobody: one gradient
    holding the HyperNode the caller searches under (the call's second argument)."""
    fns = _flat(tiers)

    def gradients(*args) -> list:
        if fns:
            return fns[0](*args)
        return [[args[1]]]
    return gradients


def each(tiers: Tiers) -> Callable:
    fns = _flat(tiers)

    def call(*args) -> None:
        for fn in fns:
            fn(*args)
    return call


def union_first_nonempty_tier(tiers: Tiers) -> Callable:
    """Union of victims inside a tier; the first tier with any victim wins (VictimTasks)."""
    def victims(tasks) -> list:
        for tier in tiers:
            seen: dict[int, object] = {}
            for fn in tier:
                chosen, _vote = fn(tasks)
                for task in chosen:
                    seen.setdefault(id(task), task)
            if seen:
                return list(seen.values())
        return []
    return victims


COMBINATORS: dict[str, tuple[Callable, frozenset]] = {
    "order": (order, frozenset({"order"})),
    "compare": (compare, frozenset({"order"})),
    "intersect": (intersect, frozenset({"victims"})),
    "intersect-all": (intersect_all, frozenset({"victims"})),
    "veto": (veto, frozenset({"victims"})),
    "vote": (vote, frozenset({"vote"})),
    "any": (any_, frozenset({"bool"})),
    "all": (all_, frozenset({"bool"})),
    "tier-bound": (tier_bound, frozenset({"bool"})),
    "sum-bound": (sum_bound, frozenset({"score"})),
    "first-tier-all": (first_tier_all, frozenset({"bool"})),
    "first-failure": (first_failure, frozenset({"failure"})),
    "sum": (sum_, frozenset({"score"})),
    "sum-by-key": (sum_by_key, frozenset({"scores", "hyper-scores"})),
    "first-answer": (first_answer, frozenset({"gradients"})),
    "each": (each, frozenset({"event"})),
    "union-first-nonempty-tier": (union_first_nonempty_tier, frozenset({"victims"})),
}
"""combinator name -> (builder, hook kinds it can combine)"""
