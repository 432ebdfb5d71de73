"""One-line victim rules: ``victim when COND`` and bare candidate conditions, as sugar over loops.

The design brief writes a reclaim policy as one line::

    on reclaimable(reclaimer, candidates):
        victim when status == Running and queue != self.queue and queue.reclaimable

This pass rewrites such rules, before the checker sees the module, into what
a policy author would otherwise spell out -- a loop over the candidates with
qualified names, enum strings and explicit none checks -- so every later
stage (checker, compiler, coverage, fmt of the expanded form) is unchanged
and the sugar is checked exactly as strictly as the code it stands for.

Inside a rule condition (docs/language.md, "Victim rules"):

- ``candidate`` is the task being considered and ``self`` the task that needs
  room (the hook's first parameter, when it is a task);
- a name that is an attribute of ``Task`` means the candidate's attribute;
  a name that is both a candidate attribute and something the policy or the
  standard library declares is an error (E160): never a silent choice;
- a bare name compared with an enumeration (``status == Running``) is that
  enumeration's value, checked like the string form (E141 with the values);
- a comparison, or a boolean read, whose operand goes through or ends at a
  candidate's optional value that is none (its ``job``, ``queue``, ``node``...)
  is false, so a candidate outside the session is never a victim by accident;
  so is one reading *through* a value of ``self``'s that is none
  (``self.job.priority``).  Comparing with ``none`` itself is how a rule
  tests for none.

Several rules in one hook mean "any of them": they become one loop, in which
a candidate is chosen at most once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable

from . import ast as A
from . import rule_errors
from .diagnostics import Diagnostic, Span, numbered_from
from .env import Environment
from .types import Type
from .walk import statements, visit

CANDIDATE, SELF = "candidate", "self"
TASK = Type("Task")
COMPARISONS = frozenset({"==", "!=", "<", "<=", ">", ">=", "in", "not in"})


@dataclass(frozen=True)
class _Rules:
    """How one hook reads its rules: where the candidate and ``self`` come from."""

    form: str                   # "victims" (a loop over a list) or "candidate" (one task, a bool result)
    candidates: str | None      # the list parameter (victims form)
    candidate: str              # the name the candidate has in the expanded code
    self_name: str | None       # the parameter naming the task that needs room
    params: dict[str, Type]


def expand(module: A.Module, env: Environment) -> tuple[A.Module, list[Diagnostic]]:
    """The module with every one-line rule expanded, and the problems found doing it."""
    expander = _Expander(module, env)
    with numbered_from(module.nid + 1):  # the nodes it adds come after the tree's, the new root last
        decls = tuple(expander.hook(d) if isinstance(d, A.HookDef) else d for d in module.decls)
        if not expander.changed:
            return module, expander.diagnostics
        return replace(module, decls=decls), expander.diagnostics


class _Expander:
    def __init__(self, module: A.Module, env: Environment) -> None:
        self.env, self.file = env, module.file
        self.diagnostics: list[Diagnostic] = []
        self.changed = False
        self.task_attrs = env.types["Task"].attributes if "Task" in env.types else {}
        self.module_names: dict[str, tuple[str, Span]] = {}
        for decl in module.decls:
            what = {A.ArgDecl: "argument", A.StateDecl: "state", A.ConstDecl: "constant",
                    A.FuncDef: "definition", A.Use: "module"}.get(type(decl))
            if what and not isinstance(decl, A.HookDef):  # every kind named above has a name
                self.module_names[decl.name] = (what, decl.span)
        self.library = set(env.globals) | set(env.functions) | set(env.dispatch)

    def report(self, diagnostic: Diagnostic) -> None:
        """Record a problem, made by its constructor in rule_errors."""
        self.diagnostics.append(diagnostic)

    # -- hooks ---------------------------------------------------------------------------------
    def _rules_of(self, hook: A.HookDef) -> _Rules | None:
        sig = self.env.hooks.get(hook.names[0])
        names = [name for name, _ in hook.params]
        if sig is None or len(names) != len(sig.params):
            return None  # the checker reports the hook itself
        params = dict(zip(names, sig.params))
        first_is_task = bool(sig.params) and sig.params[0] == TASK
        if sig.kind == "victims" and sig.params and sig.params[-1] == Type("list", (TASK,)):
            return _Rules("victims", names[-1], CANDIDATE, names[0] if first_is_task and len(names) > 1 else None,
                          params)
        if sig.kind == "bool" and sig.params == (TASK, TASK):
            return _Rules("candidate", None, names[1], names[0], params)
        return None

    def hook(self, hook: A.HookDef) -> A.HookDef:
        keyed = self._task_keys(hook)
        if keyed is not None:
            return keyed
        rules = self._rules_of(hook)
        if isinstance(hook.body, tuple):
            found = [s for s in statements(hook.body, guarded=False) if _is_rule(s)]
            if not found:
                return hook
            self.changed = True
            if rules is None:
                for stmt in found:
                    self.report(rule_errors.rule_without_candidates(self.file, stmt.span, hook.names[0]))
                return replace(hook, body=_without(hook.body, found))
            return replace(hook, body=self._block(hook, hook.body, rules, found))
        if rules is not None and rules.form == "candidate":
            condition = self._condition(hook.body, rules, self._locals(hook, ()))
            if condition is not hook.body:
                self.changed = True
                return replace(hook, body=condition)
        return hook

    def _task_keys(self, hook: A.HookDef) -> A.HookDef | None:
        """``order by start_time`` in a one-parameter task order hook (``task_order``,
        ``victim_order``): a bare name that is a ``Task`` attribute is the task's, as in a rule."""
        sig = self.env.hooks.get(hook.names[0])
        body = hook.body
        if (sig is None or sig.kind != "order" or sig.params != (TASK, TASK) or len(hook.params) != 1
                or not isinstance(body, tuple) or len(body) != 1 or not isinstance(body[0], A.OrderBy)):
            return None
        task = hook.params[0][0]
        rules = _Rules("order", None, task, None, {task: TASK})
        resolver = _Resolver(self, rules, self._locals(hook, ()))
        keys = tuple((resolver.expr(key), desc) for key, desc in body[0].keys)
        if all(new is old for (new, _), (old, _) in zip(keys, body[0].keys)):
            return hook
        self.changed = True
        return replace(hook, body=(replace(body[0], keys=keys),))

    def _block(self, hook: A.HookDef, body: tuple[A.Stmt, ...], rules: _Rules, found: list[A.Stmt]
               ) -> tuple[A.Stmt, ...]:
        """The hook's block ``body`` with its rules gathered into one loop (or chain of returns) at the last rule."""
        top = [s for s in body if _is_rule(s)]
        nested = [s for s in found if not any(s is t for t in top)]
        for stmt in nested:
            self.report(rule_errors.nested_rule(self.file, stmt.span))
        if nested:
            body = _without(body, nested)
            hook = replace(hook, body=body)
        for stmt in top:
            if not isinstance(stmt, A.When):
                self.report(rule_errors.bare_victim(self.file, stmt.span))
        rules_here = [s for s in top if isinstance(s, A.When)]
        last = max((i for i, s in enumerate(body) if any(s is r for r in top)), default=-1)
        before = [s for s in body[:last] if not _is_rule(s)]
        scope = self._locals(hook, before)
        conditions = [self._condition(rule.cond, rules, scope) for rule in rules_here]
        expanded = self._loop(rules, rules_here, conditions) if rules_here else ()
        gathered = [s for s in body[:last] if not _is_rule(s)] + list(expanded) + \
            [s for s in body[last + 1:] if not _is_rule(s)]
        return tuple(gathered) or (A.Pass(hook.span),)

    def _loop(self, rules: _Rules, found: list[A.When], conditions: list[A.Expr]) -> tuple[A.Stmt, ...]:
        if rules.form == "candidate":  # any rule allows the candidate
            returns = [A.When(c, A.Return(A.Literal("bool", True, r.span, "true"), r.span), r.span)
                       for r, c in zip(found, conditions)]
            return (*returns, A.Return(A.Literal("bool", False, found[-1].span, "false"), found[-1].span))
        pick = lambda span: A.Victim(A.Name(rules.candidate, span), span)  # noqa: E731
        body: list[A.Stmt] = [A.If(((c, (pick(r.span), A.Continue(r.span))),), (), r.span)
                              for r, c in zip(found[:-1], conditions[:-1])]
        body.append(A.When(conditions[-1], pick(found[-1].span), found[-1].span))
        first = found[0].span
        return (A.For(rules.candidate, A.Name(rules.candidates or "", first), tuple(body), first, first),)

    def _locals(self, hook: A.HookDef, before: Iterable[A.Stmt]) -> dict[str, tuple[str, Span]]:
        names = {name: ("parameter", span) for name, span in hook.params}
        for stmt in before:
            if isinstance(stmt, A.Let):
                names[stmt.name] = ("local", stmt.span)
        return names

    # -- conditions ---------------------------------------------------------------------------
    def _condition(self, cond: A.Expr, rules: _Rules, scope: dict[str, tuple[str, Span]]) -> A.Expr:
        resolved = _Resolver(self, rules, scope).expr(cond)
        guarded, _ = _Guards(self, rules).condition(resolved, frozenset())
        return guarded


class _Resolver:
    """Names in a rule condition: candidate attributes, ``self``, ``candidate`` and bare enum values."""

    def __init__(self, owner: _Expander, rules: _Rules, scope: dict[str, tuple[str, Span]]) -> None:
        self.owner, self.rules = owner, rules
        self.declared = {**owner.module_names, **scope}
        self.bound: list[set[str]] = []  # names bound by comprehensions and lambdas around the current node

    def _is_bound(self, name: str) -> bool:
        return any(name in level for level in self.bound)

    def expr(self, e: A.Expr) -> A.Expr:
        method = getattr(self, f"_{type(e).__name__}", None)
        return method(e) if method else e

    def _Name(self, e: A.Name) -> A.Expr:
        name, owner, rules = e.id, self.owner, self.rules
        if self._is_bound(name):
            return e
        if name == SELF:
            if rules.self_name is None:
                owner.report(rule_errors.self_without_preemptor(owner.file, e.span))
                return A.Name(rules.candidate, e.span)  # reported once here, not again as unknown
            return A.Name(rules.self_name, e.span)
        if name == CANDIDATE:
            if name in self.declared and name != rules.candidate:
                self._clash(e, "the candidate")
            return A.Name(rules.candidate, e.span)
        declared_elsewhere = name in owner.library or name in self.declared
        if name == rules.candidate or (name not in owner.task_attrs and declared_elsewhere):
            return e
        if name in self.declared:
            self._clash(e, f"the candidate's attribute '{name}'")
            return e
        # A candidate attribute -- or an unknown name, which the checker then reports as an
        # unknown attribute of Task with the nearest attribute as a hint.
        return A.Attr(A.Name(rules.candidate, e.span), name, e.span, e.span)

    def _clash(self, e: A.Name, meaning: str) -> None:
        what, span = self.declared[e.id]
        self.owner.report(rule_errors.name_clash(self.owner.file, e.span, e.id, meaning, what, span.line))

    def _Attr(self, e: A.Attr) -> A.Expr:
        return replace(e, obj=self.expr(e.obj))

    def _Call(self, e: A.Call) -> A.Expr:
        return replace(e, func=e.func if isinstance(e.func, A.Name) else self.expr(e.func),
                       args=tuple(self.expr(a) for a in e.args),
                       kwargs=tuple((k, self.expr(v), s) for k, v, s in e.kwargs))

    def _Index(self, e: A.Index) -> A.Expr:
        return replace(e, obj=self.expr(e.obj), key=self.expr(e.key))

    def _Unary(self, e: A.Unary) -> A.Expr:
        return replace(e, operand=self.expr(e.operand))

    def _Binary(self, e: A.Binary) -> A.Expr:
        if e.op in ("==", "!="):  # `attr == Value`: the right side is read as the value first
            left = self.expr(e.left)
            right = self._enum(e.right, left) or self.expr(e.right)
            return replace(e, left=self._enum(e.left, right) or left, right=right)
        left = self.expr(e.left)
        if e.op in ("in", "not in") and isinstance(e.right, A.ListLit):
            items = tuple(self._enum(item, left) or self.expr(item) for item in e.right.items)
            return replace(e, left=left, right=replace(e.right, items=items))
        return replace(e, left=left, right=self.expr(e.right))

    def _unknown(self, name: str) -> bool:
        """Declared nowhere: neither the policy, the library, the candidate nor the rule's own names."""
        return not (self._is_bound(name) or name in (SELF, CANDIDATE, self.rules.candidate)
                    or name in self.declared or name in self.owner.library or name in self.owner.task_attrs)

    def _enum(self, raw: A.Expr, other: A.Expr) -> A.Expr | None:
        """A bare, undeclared name compared with an enumeration is that enumeration's value (also
        beside a misspelt candidate attribute, so that the attribute is the one error reported)."""
        if not isinstance(raw, A.Name) or not self._unknown(raw.id):
            return None
        kind = _static_type(other, self.rules, self.owner.env)
        misspelt = isinstance(other, A.Attr) and kind is None and _chain(other, self.rules.candidate) is not None
        if misspelt or (kind is not None and kind.required.name in self.owner.env.enums):
            return A.Literal("string", raw.id, raw.span, f'"{raw.id}"')
        return None

    def _Conditional(self, e: A.Conditional) -> A.Expr:
        return replace(e, cond=self.expr(e.cond), then=self.expr(e.then), orelse=self.expr(e.orelse))

    def _ListLit(self, e: A.ListLit) -> A.Expr:
        return replace(e, items=tuple(self.expr(i) for i in e.items))

    def _MapLit(self, e: A.MapLit) -> A.Expr:
        return replace(e, entries=tuple((self.expr(k), self.expr(v)) for k, v in e.entries))

    def _bind(self, names: set[str], build):
        self.bound.append(names)
        try:
            return build()
        finally:
            self.bound.pop()

    def _ListComp(self, e: A.ListComp) -> A.Expr:
        iterable = self.expr(e.iter)
        return self._bind({e.var}, lambda: replace(
            e, iter=iterable, elem=self.expr(e.elem), cond=e.cond and self.expr(e.cond)))

    def _MapComp(self, e: A.MapComp) -> A.Expr:
        iterable = self.expr(e.iter)
        return self._bind({e.var}, lambda: replace(
            e, iter=iterable, key=self.expr(e.key), value=self.expr(e.value), cond=e.cond and self.expr(e.cond)))

    def _Lambda(self, e: A.Lambda) -> A.Expr:
        return self._bind({name for name, _, _ in e.params}, lambda: replace(e, body=self.expr(e.body)))


class _Guards:
    """None-safety: a comparison reading a candidate's optional value that is none is false."""

    def __init__(self, owner: _Expander, rules: _Rules) -> None:
        self.owner, self.rules = owner, rules

    def condition(self, e: A.Expr, narrowed: frozenset[str]) -> tuple[A.Expr, frozenset[str]]:
        """The guarded condition, and the paths known not to be none when it is true."""
        if isinstance(e, A.Binary) and e.op == "and":
            left, after_left = self.condition(e.left, narrowed)
            right, after_right = self.condition(e.right, after_left)
            return replace(e, left=left, right=right), after_right
        if isinstance(e, A.Binary) and e.op == "or":
            return replace(e, left=self.condition(e.left, narrowed)[0],
                           right=self.condition(e.right, narrowed)[0]), narrowed
        if isinstance(e, A.Unary) and e.op == "not":
            operand = self.condition(e.operand, narrowed)[0]
            if operand is not e.operand and self._optional_paths(e.operand):
                self.owner.report(rule_errors.none_under_not(self.owner.file, e.span))
            return replace(e, operand=operand), narrowed
        return self._leaf(e, narrowed)

    def _leaf(self, e: A.Expr, narrowed: frozenset[str]) -> tuple[A.Expr, frozenset[str]]:
        tested = None  # `path != none` / `path == none`: the path itself is what is tested
        if isinstance(e, A.Binary) and e.op in ("==", "!=") and _is_none(e.right):
            tested = e.left
        elif isinstance(e, A.Binary) and e.op in ("==", "!=") and _is_none(e.left):
            tested = e.right
        guards: list[tuple[str, A.Expr]] = []
        for path in self._optional_paths(e):
            key = _key(path)
            if key not in narrowed and key not in (k for k, _ in guards) and path is not tested:
                guards.append((key, path))
        tested_key = _key(tested) if tested is not None and isinstance(e, A.Binary) and e.op == "!=" else None
        out = e
        for _key_text, path in reversed(guards):
            check = A.Binary("!=", _copy(path), A.Literal("none", None, path.span, "none"), path.span)
            out = A.Binary("and", check, out, e.span)
        after = narrowed | {k for k, _ in guards} | ({tested_key} if tested_key else set())
        return out, frozenset(after)

    def _optional_paths(self, e: A.Expr) -> list[A.Expr]:
        """Prefixes of candidate attribute paths in ``e`` whose value may be none, outermost first."""
        found: list[A.Expr] = []

        def enter(node: A.Node) -> bool:
            if isinstance(node, A.Attr):
                chain = _chain(node, self.rules.candidate)
                if chain is not None:
                    found.extend(self._nullable_prefixes(chain))
                    return False
                chain = _chain(node, self.rules.self_name) if self.rules.self_name else None
                if chain is not None:  # only paths *through* a value of self's that may be none
                    found.extend(p for p in self._nullable_prefixes(chain) if p is not chain[-1])
                    return False
            # Comprehensions and lambdas have their own scope: explicit checks there, as everywhere.
            return not isinstance(node, (A.Lambda, A.ListComp, A.MapComp))
        visit(e, enter)
        return found

    def _nullable_prefixes(self, chain: list[A.Attr]) -> list[A.Expr]:
        out: list[A.Expr] = []
        current = TASK
        for attr in chain:
            info = self.owner.env.types.get(current.required.name)
            spec = info.attributes.get(attr.name) if info else None
            if spec is None:
                return out  # the checker reports the unknown attribute
            current = spec.type
            if current.optional:
                out.append(attr)
        return out


def _is_rule(stmt: A.Stmt) -> bool:
    inner = stmt.stmt if isinstance(stmt, A.When) else stmt
    return isinstance(inner, A.Victim) and inner.value is None


def _without(body: tuple[A.Stmt, ...], rules: list[A.Stmt]) -> tuple[A.Stmt, ...]:
    """``body`` with the rules removed (after an error), keeping every block non-empty."""
    def strip(block: tuple[A.Stmt, ...], span: Span) -> tuple[A.Stmt, ...]:
        kept = []
        for stmt in block:
            if any(stmt is r for r in rules):
                continue
            if isinstance(stmt, A.If):
                stmt = replace(stmt, branches=tuple((c, strip(b, stmt.span)) for c, b in stmt.branches),
                               orelse=strip(stmt.orelse, stmt.span) if stmt.orelse else ())
            elif isinstance(stmt, (A.For, A.Drain, A.While)):
                stmt = replace(stmt, body=strip(stmt.body, stmt.span))
            kept.append(stmt)
        return tuple(kept) or (A.Pass(span),)
    return strip(body, body[0].span if body else Span())


def _chain(node: A.Attr, root: str) -> list[A.Attr] | None:
    """``root.a.b`` as [a, b] (the Attr nodes, innermost first), or None if not rooted there."""
    chain: list[A.Attr] = []
    current: A.Expr = node
    while isinstance(current, A.Attr):
        chain.append(current)
        current = current.obj
    if isinstance(current, A.Name) and current.id == root:
        return list(reversed(chain))
    return None


def _static_type(e: A.Expr, rules: _Rules, env: Environment) -> Type | None:
    """The type of a name or attribute path, where the declarations alone tell it."""
    if isinstance(e, A.Name):
        return TASK if e.id == rules.candidate else rules.params.get(e.id)
    if isinstance(e, A.Attr):
        owner = _static_type(e.obj, rules, env)
        info = env.types.get(owner.required.name) if owner is not None else None
        spec = info.attributes.get(e.name) if info else None
        return spec.type if spec else None
    return None


def _is_none(e: A.Expr) -> bool:
    return isinstance(e, A.Literal) and e.kind == "none"


def _key(e: A.Expr | None) -> str:
    if isinstance(e, A.Attr):
        return f"{_key(e.obj)}.{e.name}"
    return e.id if isinstance(e, A.Name) else f"<{id(e)}>"


def _copy(e: A.Expr) -> A.Expr:
    """A fresh copy of a path: nodes are keyed by identity in the checker's side tables."""
    if isinstance(e, A.Attr):
        return replace(e, obj=_copy(e.obj))
    return replace(e)
