"""Volcano's resource vector (``pkg/scheduler/api/resource_info.go``).

CPU is kept in millicores, memory in bytes, ``pods`` as a count and every other
scalar resource in milli-units, exactly as Volcano stores them, so that the
epsilon comparisons below give the same answers.  ``scalars`` is ``None`` when
no scalar was ever set: several Volcano operations behave differently for a
missing map and an empty one, and the policies must see the same quirks.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from fumarole.runtime.api.quantity import (
    QuantityError,
    milli_value,
    parse_quantity,
    value,
)

EPS = 0.1  # Volcano's minResource
INF = float("inf")
ZERO, INFINITY = "zero", "infinity"  # dimension default modes
_IGNORED_PREFIX = "count/"
_NATIVE = {"cpu", "memory", "pods", "ephemeral-storage", "storage"}
# Resource lists of texts already parsed (see Resource.from_list); never handed out, only cloned.
# Only lists of texts are kept, so a hit is a list of the same texts: a text never equals the
# number or boolean YAML may have read instead (1, 1.0 and true are equal keys, "1" is not).
_PARSED: dict[tuple, "Resource"] = {}
_PARSED_LIMIT = 4096


def all_text(items: tuple) -> bool:
    """Every (name, quantity) pair of a resource list is two texts."""
    for name, raw in items:
        if type(raw) is not str or type(name) is not str:
            return False
    return True


def _le(a: float, b: float) -> bool:
    return a < b or abs(a - b) < EPS


def _is_scalar_name(name: str) -> bool:
    """Extended, hugepages, attachable-volumes and prefixed native resources."""
    if name.startswith(_IGNORED_PREFIX) or name in ("storage",):
        return False
    if name.startswith(("hugepages-", "attachable-volumes-", "requests.hugepages-")):
        return True
    return "/" in name or name not in _NATIVE


_new_resource = object.__new__


class Resource:
    """A mutable resource vector; policies see it with value semantics."""

    __slots__ = ("milli_cpu", "memory", "scalars", "max_task_num")

    def __init__(self, milli_cpu: float = 0.0, memory: float = 0.0,
                 scalars: dict[str, float] | None = None, max_task_num: int = 0) -> None:
        self.milli_cpu = float(milli_cpu)
        self.memory = float(memory)
        self.scalars = scalars
        self.max_task_num = max_task_num

    # -- construction -----------------------------------------------------
    @classmethod
    def from_list(cls, resources: Mapping[str, object] | None) -> "Resource":
        """Build from a Kubernetes ResourceList; raises QuantityError on bad or negative values.

        A cluster repeats a few resource lists thousands of times (every pod of a job
        requests the same), so a list of texts is parsed once and its vector cloned.
        """
        if not resources:
            return cls()
        items = tuple(resources.items())
        try:
            known = _PARSED.get(items)
        except TypeError:  # a list or mapping where a quantity belongs: QuantityError below
            known = None
        if known is None:
            known = cls._parsed(items)
            if all_text(items):
                if len(_PARSED) >= _PARSED_LIMIT:
                    _PARSED.clear()
                _PARSED[items] = known
        return known.clone()

    @classmethod
    def _parsed(cls, items: tuple) -> "Resource":
        res = cls()
        for name, raw in items:
            q = parse_quantity(raw)
            if q < 0:
                raise QuantityError(f"negative quantity {raw!r} for resource {name!r}")
            if name == "cpu":
                res.milli_cpu += milli_value(q)
            elif name == "memory":
                res.memory += value(q)
            elif name == "pods":
                res.max_task_num += value(q)
                res._add_scalar("pods", float(value(q)))
            elif name == "ephemeral-storage":
                res._add_scalar(name, float(milli_value(q)))
            elif _is_scalar_name(name):
                res._add_scalar(name, float(milli_value(q)))
        return res

    @classmethod
    def parse(cls, resources: Mapping[str, object] | None) -> "Resource | None":
        """``None`` for an absent list, else :meth:`from_list`."""
        return None if resources is None else cls.from_list(resources)

    def _add_scalar(self, name: str, amount: float) -> None:
        if self.scalars is None:
            self.scalars = {}
        self.scalars[name] = self.scalars.get(name, 0.0) + amount

    def clone(self) -> "Resource":
        return Resource(self.milli_cpu, self.memory,
                        None if self.scalars is None else dict(self.scalars), self.max_task_num)

    # -- reading ------------------------------------------------------------
    def get(self, name: str) -> float:
        if name == "cpu":
            return self.milli_cpu
        if name == "memory":
            return self.memory
        if self.scalars is None:
            return 0.0
        return self.scalars.get(name, 0.0)

    def is_empty(self) -> bool:
        """True when cpu, memory and every scalar except ``pods`` are below epsilon."""
        if self.milli_cpu >= EPS or self.memory >= EPS:
            return False
        if self.scalars:
            for name, amount in self.scalars.items():
                if name != "pods" and amount >= EPS:
                    return False
        return True

    def is_zero(self, name: str) -> bool:
        return self.get(name) < EPS

    def resource_names(self) -> list[str]:
        """Names whose value reaches epsilon (``pods`` included)."""
        names = []
        if self.milli_cpu >= EPS:
            names.append("cpu")
        if self.memory >= EPS:
            names.append("memory")
        if self.scalars:
            names.extend(n for n, v in self.scalars.items() if v >= EPS)
        return names

    def to_dict(self) -> dict[str, float]:
        out = {"cpu": self.milli_cpu, "memory": self.memory}
        if self.scalars:
            out.update(self.scalars)
        return out

    def __repr__(self) -> str:
        parts = [f"cpu {self.milli_cpu:g}m", f"memory {self.memory:g}"]
        if self.scalars:
            parts += [f"{k} {v:g}" for k, v in sorted(self.scalars.items())]
        return "<" + ", ".join(parts) + ">"

    # -- in-place arithmetic (Volcano's Add / Sub / Multi) -------------------
    def add(self, rr: "Resource") -> "Resource":
        self.milli_cpu += rr.milli_cpu
        self.memory += rr.memory
        if rr.scalars:
            if self.scalars is None:
                self.scalars = {}
            s = self.scalars
            for name, amount in rr.scalars.items():
                s[name] = s.get(name, 0.0) + amount
        return self

    def sub(self, rr: "Resource") -> "Resource":
        """Volcano's Sub/SubWithoutAssert: scalars are skipped when self has no scalar map."""
        self.milli_cpu -= rr.milli_cpu
        self.memory -= rr.memory
        if self.scalars is not None and rr.scalars:
            s = self.scalars
            for name, amount in rr.scalars.items():
                s[name] = s.get(name, 0.0) - amount
        return self

    def multi(self, factor: float) -> "Resource":
        self.milli_cpu *= factor
        self.memory *= factor
        if self.scalars:
            for name in self.scalars:
                self.scalars[name] *= factor
        return self

    def set_max(self, rr: "Resource") -> "Resource":
        self.milli_cpu = max(self.milli_cpu, rr.milli_cpu)
        self.memory = max(self.memory, rr.memory)
        if rr.scalars:
            if self.scalars is None:
                self.scalars = dict(rr.scalars)
            else:
                for name, amount in rr.scalars.items():
                    self.scalars[name] = max(self.scalars.get(name, 0.0), amount)
        return self

    def min_dimension(self, rr: "Resource", mode: str) -> "Resource":
        """Per-dimension minimum in place; missing scalars follow ``mode``."""
        self.milli_cpu = min(self.milli_cpu, rr.milli_cpu)
        self.memory = min(self.memory, rr.memory)
        if self.scalars is None:
            return self
        if rr.scalars is None:
            if mode == ZERO:
                for name in self.scalars:
                    self.scalars[name] = 0.0
            return self
        for name, amount in self.scalars.items():
            if name in rr.scalars:
                self.scalars[name] = min(amount, rr.scalars[name])
            elif mode == ZERO:
                self.scalars[name] = 0.0
        return self

    # -- value-semantics helpers used by compiled policies ------------------
    # ``clone().add(rr)`` and ``clone().sub(rr)`` built in one step: policies add and subtract
    # resources on every node they consider, and the copy, then the update, cost three calls each.
    def __add__(self, rr: "Resource") -> "Resource":
        out = _new_resource(Resource)
        out.milli_cpu = float(self.milli_cpu) + rr.milli_cpu
        out.memory = float(self.memory) + rr.memory
        out.max_task_num = self.max_task_num
        scalars = self.scalars
        if rr.scalars:
            scalars = {} if scalars is None else dict(scalars)
            for name, amount in rr.scalars.items():
                scalars[name] = scalars.get(name, 0.0) + amount
        elif scalars is not None:
            scalars = dict(scalars)
        out.scalars = scalars
        return out

    def __sub__(self, rr: "Resource") -> "Resource":
        out = _new_resource(Resource)
        out.milli_cpu = float(self.milli_cpu) - rr.milli_cpu
        out.memory = float(self.memory) - rr.memory
        out.max_task_num = self.max_task_num
        scalars = self.scalars
        if scalars is not None:
            scalars = dict(scalars)
            if rr.scalars:
                for name, amount in rr.scalars.items():
                    scalars[name] = scalars.get(name, 0.0) - amount
        out.scalars = scalars
        return out

    def __mul__(self, factor: float) -> "Resource":
        return self.clone().multi(factor)

    __rmul__ = __mul__


# -- comparisons ------------------------------------------------------------

def _lt(a: float, b: float) -> bool:
    return a < b


def _every_dimension(l: Resource, r: Resource, mode: str, ok) -> bool:
    """ok(l, r) on cpu, memory and every scalar of l; a scalar missing from r is 0
    (ZERO) or skipped (INFINITY), and in INFINITY mode a scalar r sets must be set in l."""
    if not (ok(l.milli_cpu, r.milli_cpu) and ok(l.memory, r.memory)):
        return False
    rs = r.scalars
    if mode == INFINITY and rs:
        ls = l.scalars or {}
        for name in rs:
            if name not in ls:
                return False
    if l.scalars:
        for name, lv in l.scalars.items():
            if rs is None or name not in rs:
                if mode == INFINITY:
                    continue
                rv = 0.0
            else:
                rv = rs[name]
            if not ok(lv, rv):
                return False
    return True


def less_equal(l: Resource, r: Resource, mode: str = ZERO) -> bool:
    """Volcano's LessEqual: every dimension within epsilon."""
    return _every_dimension(l, r, mode, _le)


def less_equal_sum(l: Resource, a: Resource, b: Resource) -> bool:
    """``less_equal(l, a + b)`` without building the sum: policies ask whether a request fits
    what a node has plus what evicting would give back, for every node they consider.  Each
    dimension of the sum is added as ``a + b`` adds it (a scalar one side lacks counts 0)."""
    if not (_le(l.milli_cpu, a.milli_cpu + b.milli_cpu) and _le(l.memory, a.memory + b.memory)):
        return False
    if l.scalars:
        sa, sb = a.scalars or _NONE, b.scalars or _NONE
        for name, lv in l.scalars.items():
            if not _le(lv, sa.get(name, 0.0) + sb.get(name, 0.0)):
                return False
    return True


_NONE: dict[str, float] = {}


def less_equal_with_names(l: Resource, r: Resource, mode: str = ZERO) -> tuple[bool, list[str]]:
    failed = []
    if not _le(l.milli_cpu, r.milli_cpu):
        failed.append("cpu")
    if not _le(l.memory, r.memory):
        failed.append("memory")
    if l.scalars:
        rs = r.scalars or {}
        for name, lv in l.scalars.items():
            if name not in rs:
                if mode == INFINITY:
                    continue
                rv = 0.0
            else:
                rv = rs[name]
            if not _le(lv, rv):
                failed.append(name)
    return not failed, failed


def less(l: Resource, r: Resource, mode: str = ZERO) -> bool:
    """Volcano's Less: every dimension strictly below."""
    return _every_dimension(l, r, mode, _lt)


def _partly(l: Resource, r: Resource, mode: str, cmp) -> bool:
    if cmp(l.milli_cpu, r.milli_cpu) or cmp(l.memory, r.memory):
        return True
    ls, rs = l.scalars or {}, r.scalars or {}
    if mode == ZERO:
        for name in rs:
            if name not in ls:
                return True
    for name, lv in ls.items():
        if name not in rs and mode == INFINITY:
            return True
        if cmp(lv, rs.get(name, 0.0)):
            return True
    return False


def less_partly(l: Resource, r: Resource, mode: str = ZERO) -> bool:
    return _partly(l, r, mode, lambda a, b: a < b)


def less_equal_partly(l: Resource, r: Resource, mode: str = ZERO) -> bool:
    return _partly(l, r, mode, _le)


def equal(l: Resource, r: Resource) -> bool:
    """Volcano's Equal: within epsilon on cpu, memory and every scalar of ``l``."""
    if abs(l.milli_cpu - r.milli_cpu) >= EPS or abs(l.memory - r.memory) >= EPS:
        return False
    for name, lv in (l.scalars or {}).items():
        if abs(lv - r.get(name)) >= EPS:
            return False
    return True


def exactly_equal(l: Resource, r: Resource) -> bool:
    """Field-wise float equality (a missing scalar map equals an empty one)."""
    return (l.milli_cpu == r.milli_cpu and l.memory == r.memory
            and (l.scalars or {}) == (r.scalars or {}))


def added_in_order(start: Resource, terms: Sequence[Resource], adds: Sequence[bool], begin: int, end: int) -> Resource:
    """``start`` plus ``terms[i]`` for each ``i`` from ``begin`` to ``end - 1`` with ``adds[i]``, in that
    order, as one new Resource: the same float additions as the chain of ``+`` (so the same figures to
    the bit, ``start``'s max_task_num kept), without a vector per addition.  drf's HDRF trials add up to
    half a leaf's kept terms to a kept sum for every victim they try."""
    milli_cpu, memory = float(start.milli_cpu), float(start.memory)
    scalars = None if start.scalars is None else dict(start.scalars)
    for i in range(begin, end):
        if adds[i]:
            term = terms[i]
            milli_cpu += term.milli_cpu
            memory += term.memory
            if term.scalars:
                if scalars is None:
                    scalars = {}
                for name, amount in term.scalars.items():
                    scalars[name] = scalars.get(name, 0.0) + amount
    return Resource(milli_cpu, memory, scalars, start.max_task_num)


def _requested_dims(req: Resource) -> Iterable[str]:
    if req.milli_cpu > 0:
        yield "cpu"
    if req.memory > 0:
        yield "memory"
    for name, amount in (req.scalars or {}).items():
        if name != "pods" and amount > 0:
            yield name


def less_equal_with_dimension(l: Resource | None, r: Resource | None,
                              req: Resource | None) -> tuple[bool, list[str]]:
    """LessEqualWithDimensionAndResourcesName: no epsilon, only requested dims, pods ignored."""
    if l is None:
        return True, []
    if r is None:
        return False, l.resource_names()
    if req is None:
        return less_equal_with_names(l, r, ZERO)
    failed = []
    if req.milli_cpu > 0 and l.milli_cpu > r.milli_cpu:
        failed.append("cpu")
    if req.memory > 0 and l.memory > r.memory:
        failed.append("memory")
    if l.scalars is not None:
        for name, amount in (req.scalars or {}).items():
            if name == "pods":
                continue
            if amount > 0 and l.get(name) > r.get(name):
                failed.append(name)
    return not failed, failed


def within_requested_after(held: Resource, released: Resource, request: Resource, limit: Resource | None) -> bool:
    """``less_equal_with_dimension(held - released + request, limit, request)[0]`` without building
    the vector: the allocatable bounds ask it of every node preempt and reclaim consider.  Each
    dimension is worked out as ``-`` then ``+`` work it out (``-`` leaves the scalars alone when
    ``held`` has none), and compared only where the request asks for it."""
    if limit is None:
        return False
    if request.milli_cpu > 0 and float(held.milli_cpu) - released.milli_cpu + request.milli_cpu > limit.milli_cpu:
        return False
    if request.memory > 0 and float(held.memory) - released.memory + request.memory > limit.memory:
        return False
    if request.scalars:
        kept, given = held.scalars, released.scalars
        for name, amount in request.scalars.items():
            if name == "pods" or not amount > 0:
                continue
            if kept is None:
                base = 0.0
            elif given and name in given:
                base = kept.get(name, 0.0) - given[name]
            else:
                base = kept.get(name, 0.0)
            if base + amount > limit.get(name):
                return False
    return True


def less_equal_partly_with_dimension(l: Resource, r: Resource, req: Resource) -> bool:
    return any(_le(l.get(n), r.get(n)) for n in _requested_dims(req))


def less_equal_partly_with_dimension_zero_filtered(l: Resource, r: Resource, req: Resource) -> bool:
    dims = [n for n in _requested_dims(req) if not (l.get(n) < EPS and r.get(n) < EPS)]
    return any(_le(l.get(n), r.get(n)) for n in dims)


def greater_partly_with_dimension(l: Resource, r: Resource | None, req: Resource) -> list[str]:
    """Dims requested by ``req`` where l > r; Volcano reads a missing ``r`` as an empty resource."""
    if r is None:
        r = Resource()
    return [n for n in _requested_dims(req) if l.get(n) > r.get(n)]


def greater_partly_relevant(l: Resource, r: Resource | None, req: Resource) -> list[str]:
    """Dims requested by ``req`` where l > r, keeping only dims ``r`` actually sets."""
    if r is None:
        return []
    rs = r.scalars or {}
    out = []
    for n in _requested_dims(req):
        if n in ("cpu", "memory"):
            if r.get(n) < EPS:
                continue
        elif n not in rs:
            continue
        if l.get(n) > r.get(n):
            out.append(n)
    return out


def diff(l: Resource, r: Resource, mode: str = ZERO) -> tuple[Resource, Resource]:
    """(increased, decreased) per dimension; with INFINITY a missing scalar is -1 (unbounded)."""
    default = 0.0 if mode == ZERO else -1.0
    inc_scalars: dict[str, float] = {}
    dec_scalars: dict[str, float] = {}
    inc, dec = Resource(scalars=inc_scalars), Resource(scalars=dec_scalars)
    if l.milli_cpu > r.milli_cpu:
        inc.milli_cpu = l.milli_cpu - r.milli_cpu
    else:
        dec.milli_cpu = r.milli_cpu - l.milli_cpu
    if l.memory > r.memory:
        inc.memory = l.memory - r.memory
    else:
        dec.memory = r.memory - l.memory
    ls, rs = l.scalars or {}, r.scalars or {}
    for name in list(ls) + [n for n in rs if n not in ls]:
        lv, rv = ls.get(name, default), rs.get(name, default)
        if lv == -1:
            inc_scalars[name] = -1.0
        elif rv == -1:
            dec_scalars[name] = -1.0
        elif lv > rv:
            inc_scalars[name] = lv - rv
        else:
            dec_scalars[name] = rv - lv
    return inc, dec


def exceeded_part(l: Resource | None, r: Resource | None) -> Resource:
    if l is None:
        return Resource()
    if r is None:
        return l.clone()
    return diff(l, r, ZERO)[0]


def res_max(l: Resource, r: Resource) -> Resource:
    """helpers.Max: scalars are the union of the keys of both sides whose quantity is not negative.
    A scalar at 0 is kept: capacity's reclaim weighs a request's scalar only where the deserved map
    has its key (GreaterPartlyWithRelevantDimensions), and proportion's DeepEqual sees the key."""
    out = Resource(max(l.milli_cpu, r.milli_cpu), max(l.memory, r.memory))
    if l.scalars is not None or r.scalars is not None:
        out.scalars = {}
        for side in (l.scalars or {}, r.scalars or {}):
            for name, amount in side.items():
                if amount >= 0:
                    out.scalars[name] = max(out.scalars.get(name, 0.0), amount)
    return out


def res_min(l: Resource, r: Resource) -> Resource:
    out = Resource(min(l.milli_cpu, r.milli_cpu), min(l.memory, r.memory))
    if l.scalars is not None and r.scalars is not None:
        out.scalars = {name: min(amount, r.scalars.get(name, 0.0)) for name, amount in l.scalars.items()}
    return out


def share(l: float, r: float) -> float:
    if r == 0:
        return 0.0 if l == 0 else 1.0
    return l / r
