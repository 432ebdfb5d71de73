"""The session's nodes as columns: one numpy array per resource dimension and node fact.

The fast engine evaluates node-level rules over many nodes at once
(``policy_lang/vectorize.py`` compiles their batch form).  A batch form reads
node facts from these columns instead of from ``Node`` objects.  The session
marks a node as touched whenever its accounting or its Kubernetes view changes:
the row goes on the *change log*.  Each column remembers the log position it is
current at and, when a batch reads it, re-reads only the rows logged since, so a
placement costs one row of the columns actually read, not the world.

The same log keeps *row memos* current (:meth:`NodeColumns.memo`): a value per
row that depends only on that row's node and on a key the caller computes (a pod
spec's facts), computed once over every row and then, when asked again,
recomputed for the rows touched since.

Values keep Python's float semantics: every column is float64 (what Python
floats are), integer facts are exact below 2**53.
"""

from __future__ import annotations

from typing import Any, Callable, Collection, Iterable, Mapping, Sequence

import numpy as np

from fumarole.runtime.api.model import Node
from fumarole.runtime.api.resource import Resource
from fumarole.runtime.framework.batch_forms import disagreement
from fumarole.runtime.framework.policy_error import NOT_RETRIED, POLICY_FAILURES
from fumarole.runtime.k8s import noderesources
from fumarole.runtime.k8s.view import K8sView

# Resource-valued node attributes (runtime/schema.yaml) and how to read them from a node.
RESOURCE_ATTRIBUTES: dict[str, Callable[[Node], Resource]] = {
    "allocatable": lambda n: n.allocatable,
    "capacity": lambda n: n.capacity,
    "idle": lambda n: n.idle,
    "used": lambda n: n.used,
    "releasing": lambda n: n.releasing,
    "pipelined": lambda n: n.pipelined,
    "future_idle": lambda n: n.future_idle,
    "view_requested": noderesources.view_requested,
    "view_nonzero_requested": noderesources.view_nonzero_requested,
}
# Numeric and boolean node attributes, by the name policies use.
NUMERIC_ATTRIBUTES: dict[str, Callable[[Node], float]] = {
    "max_task_num": lambda n: n.allocatable.max_task_num,
    "pod_count": lambda n: len(n.view_pods),
}
BOOL_ATTRIBUTES: dict[str, Callable[[Node], bool]] = {
    "unschedulable": lambda n: bool(n.unschedulable),
}
# Attributes a session never changes: read once, never again when a row is touched.
_NO_SCALARS: Mapping[str, float] = {}  # a Resource's absent scalar map, read as an empty one
STATIC_ATTRIBUTES = frozenset({"allocatable", "capacity", "max_task_num", "unschedulable"})


class ResourceColumns:
    """One Resource per row: cpu and memory arrays, and per scalar name its values and
    whether the row sets it (Volcano tells a missing scalar from a zero one)."""

    __slots__ = ("cpu", "memory", "scalars", "has", "none")

    def __init__(self, size: int) -> None:
        self.cpu = np.zeros(size)
        self.memory = np.zeros(size)
        self.scalars: dict[str, np.ndarray] = {}
        self.has: dict[str, np.ndarray] = {}
        self.none = np.ones(size, dtype=bool)  # the row's scalar map is None

    def write(self, row: int, res: Resource) -> None:
        self.cpu[row] = res.milli_cpu
        self.memory[row] = res.memory
        scalars = res.scalars
        self.none[row] = scalars is None
        known = _NO_SCALARS if scalars is None else scalars
        for name in self.scalars:
            present = name in known
            self.scalars[name][row] = known[name] if present else 0.0
            self.has[name][row] = present
        for name, amount in known.items():
            if name not in self.scalars:
                size = len(self.cpu)
                self.scalars[name] = np.zeros(size)
                self.has[name] = np.zeros(size, dtype=bool)
                self.scalars[name][row] = amount
                self.has[name][row] = True

    def gather(self, rows: np.ndarray) -> "ResourceVector":
        return ResourceVector(self.cpu[rows], self.memory[rows],
                              {name: values[rows] for name, values in self.scalars.items()},
                              {name: has[rows] for name, has in self.has.items()}, self.none[rows])


class ResourceVector:
    """Resources of the lanes of a batch (see :class:`ResourceColumns`)."""

    __slots__ = ("cpu", "memory", "scalars", "has", "none")

    def __init__(self, cpu: np.ndarray, memory: np.ndarray, scalars: dict[str, np.ndarray],
                 has: dict[str, np.ndarray], none: np.ndarray) -> None:
        self.cpu, self.memory, self.scalars, self.has, self.none = cpu, memory, scalars, has, none

    def __len__(self) -> int:
        return len(self.cpu)

    def get(self, name: str):
        if name == "cpu":
            return self.cpu
        if name == "memory":
            return self.memory
        values = self.scalars.get(name)
        return values if values is not None else 0.0

    def item(self, lane: int) -> Resource:
        """The lane as a Resource (for rules evaluated lane by lane)."""
        scalars = None if self.none[lane] else {name: float(values[lane])
                                                for name, values in self.scalars.items() if self.has[name][lane]}
        return Resource(float(self.cpu[lane]), float(self.memory[lane]), scalars)

    def select(self, lanes: np.ndarray) -> "ResourceVector":
        return ResourceVector(self.cpu[lanes], self.memory[lanes],
                              {n: v[lanes] for n, v in self.scalars.items()},
                              {n: h[lanes] for n, h in self.has.items()}, self.none[lanes])


class NodeColumns:
    """Node facts as columns, kept current row by row through the change log."""

    # A memo's rows touched since it was current are recomputed node by node up to this many (a
    # batch of a resource score or the allocate predicate costs about as much as 15-20 per-node
    # calls, mostly per call, not per row), as one batch up to the second, and above it every
    # row is.
    MEMO_ROWS_NODE_BY_NODE = 16
    MEMO_ROWS_RECOMPUTED = 256

    def __init__(self, nodes: list[Node], view: "K8sView", checked: bool = False) -> None:
        self.nodes = nodes
        self.checked = checked  # compare each memo row worked out as a batch with the per-node value
        self.node_array = np.empty(len(nodes), dtype=object)  # the nodes, for picking many at once
        self.node_array[:] = nodes
        self.k8s = view
        self.static: dict[str, np.ndarray] = {}  # node facts that do not change in a session, by question
        self.rows = {node.name: i for i, node in enumerate(nodes)}
        size = len(nodes)
        self.resources = {name: ResourceColumns(size) for name in RESOURCE_ATTRIBUTES}
        self.numbers = {name: np.zeros(size) for name in NUMERIC_ATTRIBUTES}
        self.flags = {name: np.zeros(size, dtype=bool) for name in BOOL_ATTRIBUTES}
        self.log: list[int] = []  # the change log: rows touched, in order
        # The log position each column is current at (-1: never read).
        self._current: dict[str, int] = {name: -1 for name in (*RESOURCE_ATTRIBUTES, *NUMERIC_ATTRIBUTES,
                                                                  *BOOL_ATTRIBUTES)}
        self._memos: dict[object, tuple[np.ndarray, int]] = {}  # key -> (value per row, log position)
        self.working_out = 0  # how many memos are working out rows as a batch just now (memo_over)
        self.node_names = np.array([node.name for node in nodes], dtype=object)
        # key -> (value per row, the log's length when it was worked out; -1: never): row_values.
        self._row_values: dict[object, tuple[np.ndarray, np.ndarray]] = {}
        self._touched_at = np.zeros(size, dtype=np.int64)  # per row, the log's length after its last touch
        self.all_rows = np.arange(size)

    def touch(self, node: Node) -> None:
        """The node's accounting or Kubernetes view changed: log its row."""
        row = self.rows.get(node.name)
        if row is not None and self.nodes[row] is node:
            self.log.append(row)
            self._touched_at[row] = len(self.log)

    def touch_name(self, name: object) -> None:
        """The row of the node named ``name`` changed (plugin state kept per node: row_state.py);
        a name that is no session node's is no row's."""
        row = self.rows.get(name) if isinstance(name, str) else None
        if row is not None:
            self.log.append(row)
            self._touched_at[row] = len(self.log)

    def row_values(self, key: object, rows: np.ndarray, compute: Callable[[int], object]) -> list:
        """Values of ``rows`` that depend only on each row's node and on what ``key`` stands for (fit
        errors per pod spec): each computed when first asked (``compute(row)``), kept until its row
        is touched."""
        kept = self._row_values.get(key)
        if kept is None:
            size = len(self.nodes)
            kept = self._row_values[key] = (np.empty(size, dtype=object), np.full(size, -1, dtype=np.int64))
        values, worked_out = kept
        stale = rows[worked_out[rows] < self._touched_at[rows]]
        if len(stale):
            for row in stale.tolist():
                values[row] = compute(row)
            worked_out[stale] = len(self.log)
        return values[rows].tolist()

    def touched_since(self, position: int) -> "Collection[int]":
        """The rows logged from ``position`` on (every row for -1)."""
        return range(len(self.nodes)) if position < 0 else set(self.log[position:])

    def current(self, name: str) -> bool:
        """Bring one column up to the log's end, re-reading only the rows logged since it was
        (False: no column has that name)."""
        position, end = self._current.get(name), len(self.log)
        if position == end:
            return True
        if position is None:
            return False
        if position >= 0 and name in STATIC_ATTRIBUTES:
            self._current[name] = end
            return True
        nodes = self.nodes
        if name in self.resources:
            column, read = self.resources[name], RESOURCE_ATTRIBUTES[name]
            for row in self.touched_since(position):
                column.write(row, read(nodes[row]))
        else:
            values = self.numbers[name] if name in self.numbers else self.flags[name]
            read_value = NUMERIC_ATTRIBUTES.get(name) or BOOL_ATTRIBUTES[name]
            for row in self.touched_since(position):
                values[row] = read_value(nodes[row])
        self._current[name] = end
        return True

    def memo(self, key: object, compute: Callable[["NodeBatch"], np.ndarray], one_row: Callable[[Node], object],
             dtype: type = float) -> np.ndarray:
        """A row-local value over every row, computed over all rows the first time and then,
        when asked again, only for the rows touched since: node by node (``one_row``) for a few,
        as a batch (``compute``) for more, over all rows again when many were touched.  Both
        functions compute the same thing; the value of a row may depend only on that row's node
        and on what ``key`` stands for."""
        end = len(self.log)
        entry = self._memos.get(key)
        if entry is not None:
            values, position = entry
            if position == end:
                return values
            rows = (self.log[-1],) if position == end - 1 else self.touched_since(position)
            if len(rows) <= self.MEMO_ROWS_RECOMPUTED:
                self._recompute(values, rows, compute, one_row)
                self._memos[key] = (values, end)
                return values
        values = np.array(self._worked_out(compute, self.all_batch()), dtype=dtype)
        if values.ndim == 0:  # a batch form answering one value for every lane
            values = np.full(len(self.nodes), values.item(), dtype=dtype)
        if self.checked:
            self._check_rows(values, range(len(self.nodes)), one_row)
        self._memos[key] = (values, end)
        return values

    def memo_over(self, batch: "NodeBatch", key: object, compute: Callable[["NodeBatch"], np.ndarray],
                  one_row: Callable[[Node], object], dtype: type = float) -> np.ndarray:
        """:meth:`memo` over the lanes of ``batch``.  Asked while another memo works out some rows
        as a batch (a memoised rule calling a memoised rule), it computes the lanes directly: they
        are the rows being worked out, and the outer memo keeps what comes of them."""
        if self.working_out:
            return np.asarray(compute(batch), dtype=dtype)
        return self.memo(key, compute, one_row, dtype)[batch.rows]

    def _worked_out(self, compute: Callable[["NodeBatch"], np.ndarray], batch: "NodeBatch"):
        self.working_out += 1
        try:
            return compute(batch)
        finally:
            self.working_out -= 1

    def _recompute(self, values: np.ndarray, rows, compute: Callable[["NodeBatch"], np.ndarray],
                   one_row: Callable[[Node], object]) -> None:
        if len(rows) <= self.MEMO_ROWS_NODE_BY_NODE:
            try:
                for row in rows:
                    values[row] = one_row(self.nodes[row])
                return
            except NOT_RETRIED:  # a spent budget: the batch form would trip it again elsewhere
                raise
            except POLICY_FAILURES:  # a row no rule may read (a division by its zero): the batch form's IEEE value
                pass
        picked = np.fromiter(rows, dtype=np.intp, count=len(rows))
        values[picked] = self._worked_out(compute, NodeBatch(self, picked))
        if self.checked:
            self._check_rows(values, picked.tolist(), one_row)

    def _check_rows(self, values: np.ndarray, rows: Iterable[int], one_row: Callable[[Node], object]) -> None:
        """Under engine checking (batch_forms.py): each row a batch form worked out holds the
        per-node value, where the per-node code has one (it may stop at a policy failure on a
        row no rule reads)."""
        for row in rows:
            try:
                expected = one_row(self.nodes[row])
            except NOT_RETRIED:
                raise
            except POLICY_FAILURES:
                continue
            got = values[row].item()
            if got != expected and not (got != got and expected != expected):  # NaN is NaN
                raise disagreement(one_row, f"node {self.nodes[row].name}", got, expected)

    def all_batch(self) -> "NodeBatch":
        return NodeBatch(self, self.all_rows, self.nodes)

    def adopt(self, nodes: list[Node]) -> "NodeList":
        """A list of session nodes that never changes (a HyperNode's) as a NodeList carrying its
        rows, so every batch over it is a gather instead of a name lookup per node."""
        batch = self.batch(nodes)
        adopted = NodeList(nodes)
        if batch is not None:
            rows = batch.rows
            if len(rows) and np.array_equal(rows, np.arange(rows[0], rows[0] + len(rows))):
                rows = self.all_rows[rows[0]:rows[0] + len(rows)]  # a run of rows: see in_order
            adopted.rows = rows
        return adopted

    def in_order(self, rows: np.ndarray) -> bool:
        """Whether ``rows`` are a run of consecutive rows in order (all of them, or a slice of
        them as :meth:`adopt` keeps a HyperNode's), known without reading them."""
        return rows is self.all_rows or (rows.base is self.all_rows and rows.strides == self.all_rows.strides)

    def nodes_of(self, rows: "np.ndarray | Sequence[int]", in_order: bool = False) -> "NodeList":
        """The session nodes of ``rows`` (positions in the session's node list) as a NodeList
        carrying them.  ``in_order``: the rows are known to ascend one by one when they are as
        many as their span (a slice of the node list then, not a gather)."""
        rows = np.asarray(rows, dtype=np.intp)
        count = len(rows)
        first = int(rows[0]) if count else 0
        if in_order and count and int(rows[-1]) - first + 1 == count:
            listed = NodeList(self.nodes[first:first + count])
        else:
            listed = NodeList(self.node_array[rows].tolist())
        listed.rows = rows
        return listed

    def batch(self, nodes: Iterable[Node]) -> "NodeBatch | None":
        """The nodes as a batch; None when one of them is not a session node (a dry-run copy)."""
        nodes = list(nodes)
        rows = []
        for node in nodes:
            row = self.rows.get(node.name)
            if row is None or self.nodes[row] is not node:
                return None
            rows.append(row)
        return NodeBatch(self, np.asarray(rows, dtype=np.intp), nodes)


class NodeBatch:
    """An ordered set of session nodes (a ``list[Node]`` value in a batch form), with the
    columns of its lanes gathered once."""

    __slots__ = ("columns", "rows", "_nodes", "_cache")

    def __init__(self, columns: NodeColumns, rows: np.ndarray, nodes: list[Node] | None = None) -> None:
        self.columns, self.rows, self._nodes = columns, rows, nodes
        self._cache: dict[str, object] = {}

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def nodes(self) -> list[Node]:
        if self._nodes is None:
            self._nodes = self.columns.node_array[self.rows].tolist()
        return self._nodes

    def attribute(self, name: str):
        """A node attribute over the lanes: ResourceVector, float64 or bool array, the names; None if not a column."""
        if name in self._cache:
            return self._cache[name]
        cols = self.columns
        if name == "name":  # names never change: a gather (an object array of str)
            value = self._cache[name] = cols.node_names[self.rows]
            return value
        if not cols.current(name):
            return None
        if name in cols.resources:
            value = cols.resources[name].gather(self.rows)
        elif name in cols.numbers:
            value = cols.numbers[name][self.rows]
        else:
            value = cols.flags[name][self.rows]
        self._cache[name] = value
        return value

    def subset(self, mask: np.ndarray) -> "NodeBatch":
        return NodeBatch(self.columns, self.rows[mask])

    def node(self, lane: int) -> Node:
        return self.columns.nodes[int(self.rows[lane])]

    # A batch stands for a list[Node] wherever per-node code reads one.
    def __iter__(self):
        return iter(self.nodes)

    def __getitem__(self, index: int) -> Node:
        return self.nodes[index]


class NodeMap:
    """A ``map[Node, X]`` built over a batch: one value per lane, in the batch's order.  Its column
    may be an array other values share (a gathered column, another map's): a store replaces the
    column, nothing changes one in place."""

    __slots__ = ("batch", "column")

    def __init__(self, batch: NodeBatch, values: np.ndarray) -> None:
        self.batch, self.column = batch, values

    def over(self, batch: NodeBatch, default: float | None = None) -> np.ndarray:
        """The values for the lanes of ``batch`` (``default`` for nodes the map lacks)."""
        if batch is self.batch or (len(batch.rows) == len(self.batch.rows)
                                   and np.array_equal(batch.rows, self.batch.rows)):
            return self.column
        position = {row: i for i, row in enumerate(self.batch.rows.tolist())}
        picks = [position.get(row, -1) for row in batch.rows.tolist()]
        if default is None and -1 in picks:
            raise KeyError(batch.node(picks.index(-1)).name)
        out = np.full(len(picks), default if default is not None else 0.0)
        for lane, at in enumerate(picks):
            if at >= 0:
                out[lane] = self.column[at]
        return out

    def as_dict(self) -> dict:
        return dict(zip(self.batch.nodes, self.column.tolist()))

    # A per-node map stands for a map[Node, float] wherever per-node code reads one.
    def __len__(self) -> int:
        return len(self.column)

    def values(self) -> list:
        return self.column.tolist()

    def __iter__(self):
        return iter(self.batch.nodes)

    def __getitem__(self, node: Node) -> float:
        return self.as_dict()[node]

    def get(self, node: Node, default=None):
        return self.as_dict().get(node, default)

    def items(self):
        return self.as_dict().items()

    def keys(self):
        return list(self.batch.nodes)

    def copy(self) -> "NodeMap":
        return NodeMap(self.batch, self.column.copy())


def _forgets_rows(method: Callable[..., Any]) -> Callable[..., Any]:
    """One of list's mutators on a NodeList: the list changes, so its rows no longer say its nodes."""
    def changed(self: "NodeList", *args: Any, **kwargs: Any) -> Any:
        self.rows = None
        return method(self, *args, **kwargs)
    changed.__name__ = method.__name__
    return changed


class NodeList(list):
    """A ``list[Node]`` the fast engine built from a batch: batch forms read it without looking
    each node up again.  A list that changes (a policy's ``append``) forgets its rows."""

    rows: np.ndarray | None = None

    append = _forgets_rows(list.append)
    extend = _forgets_rows(list.extend)
    insert = _forgets_rows(list.insert)
    pop = _forgets_rows(list.pop)
    remove = _forgets_rows(list.remove)
    clear = _forgets_rows(list.clear)
    sort = _forgets_rows(list.sort)
    reverse = _forgets_rows(list.reverse)
    __setitem__ = _forgets_rows(list.__setitem__)
    __delitem__ = _forgets_rows(list.__delitem__)
    __iadd__ = _forgets_rows(list.__iadd__)


def as_batch(columns: NodeColumns, value) -> NodeBatch | None:
    """A ``list[Node]`` argument as a fresh batch of the session's columns (None if it holds
    nodes that are not the session's)."""
    if isinstance(value, NodeBatch):
        return value
    if isinstance(value, NodeList) and value.rows is not None:
        return NodeBatch(columns, value.rows, value)
    return columns.batch(value)


def as_value(result):
    """A batch form's result as per-node code reads it: maps as dicts, batches as node lists, also
    inside a list (a ``list[list[Node]]`` result holds batches)."""
    if isinstance(result, NodeMap):
        return result.as_dict()
    if isinstance(result, NodeBatch):
        nodes = NodeList(result.nodes)
        nodes.rows = result.rows
        return nodes
    if type(result) is list and any(isinstance(item, (NodeMap, NodeBatch, list)) for item in result):
        return [as_value(item) for item in result]
    return result
