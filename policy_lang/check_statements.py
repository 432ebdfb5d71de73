"""Statement checks: what each statement may do where it stands (``break`` in a loop, a vote in
a vote hook, ``return`` with the value its hook or definition gives), assignment targets,
narrowing carried from one statement to the next, and whether a block always exits.
"""

from __future__ import annotations

from typing import Iterable

from . import ast as A
from . import statement_errors, type_errors
from .check_calls import CallTyping
from .check_core import Scope
from .checked import Ref
from .diagnostics import Span
from .env import HookSig
from .types import BOOL, FLOAT, INT, STRING, UNKNOWN, VOID, Type, assignable, list_of, map_of


def hook_result(sig: HookSig) -> Type | None:
    """What a hook of this kind returns (None: nothing, a vote or a failure)."""
    return {"bool": BOOL, "score": FLOAT.maybe(), "order": INT,
            "scores": map_of(Type("Node"), FLOAT).maybe(),
            "hyper-scores": map_of(Type("HyperNode"), FLOAT).maybe(),
            "gradients": list_of(list_of(Type("HyperNode"))),
            "victims": list_of(Type("Task"))}.get(sig.kind)


class StatementChecks(CallTyping):
    """Blocks and the statements in them."""

    def block(self, stmts: Iterable[A.Stmt], scope: Scope) -> None:
        inner = Scope(scope)
        for stmt in stmts:
            self.stmt(stmt, inner)

    def _always_exits(self, stmts: tuple, returns_only: bool = False) -> bool:
        if not stmts:
            return False
        last = stmts[-1]
        if isinstance(last, A.Return):
            return True
        if returns_only:
            if isinstance(last, A.If):
                return bool(last.orelse) and all(self._always_exits(b, True) for _, b in last.branches) \
                    and self._always_exits(last.orelse, True)
            return False
        if isinstance(last, (A.Break, A.Continue)):
            return True
        if isinstance(last, A.Vote):
            return True
        if isinstance(last, A.Fail) and last.code != "unschedulable":
            return True
        if isinstance(last, A.If):
            return bool(last.orelse) and all(self._always_exits(b) for _, b in last.branches) \
                and self._always_exits(last.orelse)
        return False

    def _exits(self, stmt: A.Stmt) -> bool:
        return self._always_exits((stmt,))

    def stmt(self, stmt: A.Stmt, scope: Scope) -> None:
        method = getattr(self, "_stmt_" + type(stmt).__name__)
        method(stmt, scope)

    def _stmt_When(self, stmt: A.When, scope: Scope) -> None:
        if isinstance(stmt.stmt, A.Let):
            self.report(statement_errors.guarded_let(self.file, stmt.span))
        self.cond(stmt.cond, scope)
        guarded = Scope(scope)
        guarded.narrowed.update(self.narrowing(stmt.cond, True, scope))
        self.stmt(stmt.stmt, guarded)
        if self._exits(stmt.stmt):
            scope.narrowed.update(self.narrowing(stmt.cond, False, scope))

    def _stmt_Let(self, stmt: A.Let, scope: Scope) -> None:
        declared = self.resolve_type(stmt.type) if stmt.type else None
        got = self.expr(stmt.value, scope, declared)
        if declared is not None:
            self.expect(got, declared, stmt.value.span, f"'{stmt.name}'", stmt.value)
            t = declared
        else:
            t = got
            if self._has_unknown(t) and isinstance(stmt.value, (A.ListLit, A.MapLit)):
                self.report(type_errors.empty_literal_type(self.file, stmt.span, stmt.name))
            elif t.name == "void":
                self.report(type_errors.holds_void(self.file, stmt.value.span, stmt.name))
            elif t.name == "none":
                self.report(type_errors.none_literal_type(self.file, stmt.span, stmt.name))
        self._declare_local(scope, stmt.name, t, stmt.span, stmt.nid)

    @staticmethod
    def _has_unknown(t: Type) -> bool:
        return t.name == "unknown" and not t.args or any(a.name == "unknown" for a in t.args)

    def _target(self, target: A.Expr, scope: Scope) -> Type:
        if isinstance(target, A.Name):
            found = scope.lookup(target.id)
            if found is not None:
                t, binding = found
                self.out.refs[target.nid] = Ref("local", "", t, binding=binding)
                self._invalidate(scope, target.id)
                return t
            if target.id in self.out.states:
                t = self.out.states[target.id]
                self.out.refs[target.nid] = Ref("state", "s_" + target.id, t)
                self.out.assigned_states.setdefault(self.ctx.func_id, set()).add(target.id)
                self._invalidate(scope, target.id)
                return t
            if target.id in self.out.args or target.id in self.out.consts:
                self.report(statement_errors.assign_fixed(self.file, target.span, target.id))
                return UNKNOWN
            self.report(statement_errors.assign_undeclared(self.file, target.span, target.id))
            return UNKNOWN
        if isinstance(target, A.Index):
            container = self.expr(target.obj, scope)
            if container.name == "map":
                key_t, value_t = container.args
                got = self.expr(target.key, scope, key_t)
                self.expect(got, key_t, target.key.span, "the key", target.key)
                return value_t
            if container.name == "list":
                self.expect(self.expr(target.key, scope), INT, target.key.span, "a list index")
                return container.args[0]
            if container.name != "unknown":
                self.report(type_errors.assign_into(self.file, target.span, container))
            return UNKNOWN
        if isinstance(target, A.Attr):
            obj_t = self.expr(target.obj, scope)
            info = self._attr_info(obj_t, target)
            if info is None:
                return UNKNOWN
            if not info.writable:
                self.report(statement_errors.read_only_attribute(self.file, target.name_span, target.name, obj_t.name))
            self.out.attrs[target.nid] = info
            return info.type
        self.report(statement_errors.not_assignable(self.file, target.span))
        return UNKNOWN

    @staticmethod
    def _invalidate(scope: Scope, root: str) -> None:
        s: Scope | None = scope
        while s is not None:
            for path in [p for p in s.narrowed if p == root or p.startswith(root + ".")]:
                del s.narrowed[path]
            if root in s.vars:
                break
            s = s.parent

    def _stmt_Assign(self, stmt: A.Assign, scope: Scope) -> None:
        t = self._target(stmt.target, scope)
        got = self.expr(stmt.value, scope, t)
        self.expect(got, t, stmt.value.span, "the assigned value", stmt.value)

    def _stmt_AugAssign(self, stmt: A.AugAssign, scope: Scope) -> None:
        t = self._target(stmt.target, scope)
        self.out.types[stmt.target.nid] = t  # the compiler charges `s += ...` and `n *= ...` by this type
        got = self.expr(stmt.value, scope)
        result = self._arith(stmt.op, t, got, stmt.span)
        if result.name != "unknown" and not assignable(result, t) and t.name != "unknown":
            self.report(type_errors.augmented_result(self.file, stmt.span, stmt.op, result, t))

    def _stmt_Return(self, stmt: A.Return, scope: Scope) -> None:
        ctx = self.ctx
        want: Type | None
        if ctx.hook is None:
            want = ctx.returns or VOID
            if stmt.value is None:
                if want.name != "void":
                    self.report(statement_errors.definition_returns_no_value(self.file, stmt.span, want))
            elif want.name == "void":
                self.report(statement_errors.definition_returns_nothing(self.file, stmt.value.span))
            else:
                got = self.expr(stmt.value, scope, want)
                self.expect(got, want, stmt.value.span, "the returned value", stmt.value)
            return
        hook = ctx.hook
        want = hook_result(hook)
        if hook.kind == "victims":
            want = None
        if stmt.value is None:
            if want is not None:
                self.report(statement_errors.hook_returns_no_value(self.file, stmt.span, hook.name, want))
        elif want is None:
            self.report(statement_errors.hook_returns_a_value(self.file, stmt.value.span, hook.name, hook.kind))
        else:
            got = self.expr(stmt.value, scope, want)
            self.expect(got, want, stmt.value.span, f"the result of hook '{hook.name}'", stmt.value)

    def _stmt_Break(self, stmt: A.Break, scope: Scope) -> None:
        if not self.ctx.in_loop:
            self.report(statement_errors.outside_a_loop(self.file, stmt.span, "break"))

    def _stmt_Continue(self, stmt: A.Continue, scope: Scope) -> None:
        if not self.ctx.in_loop:
            self.report(statement_errors.outside_a_loop(self.file, stmt.span, "continue"))

    def _stmt_Pass(self, stmt: A.Pass, scope: Scope) -> None:
        pass

    def _require_kind(self, kinds: tuple[str, ...], what: str, span: Span) -> bool:
        hook = self.ctx.hook
        if hook is None or hook.kind not in kinds:
            where = f"hook '{hook.name}' ({hook.kind})" if hook else "a definition"
            self.report(statement_errors.not_in_this_hook(self.file, span, what, where, kinds))
            return False
        return True

    def _stmt_Victim(self, stmt: A.Victim, scope: Scope) -> None:
        self._require_kind(("victims",), "victim", stmt.span)
        assert stmt.value is not None, "a one-line `victim when` rule is expanded before checking"
        got = self.expr(stmt.value, scope, Type("Task"))
        self.expect(got, Type("Task"), stmt.value.span, "a victim", stmt.value)

    def _stmt_Vote(self, stmt: A.Vote, scope: Scope) -> None:
        kinds = ("vote", "victims") if stmt.verdict == "abstain" else ("vote",)
        self._require_kind(kinds, stmt.verdict, stmt.span)

    def _stmt_Fail(self, stmt: A.Fail, scope: Scope) -> None:
        if self._require_kind(("failure",), "fail", stmt.span):
            hook = self.ctx.hook
            assert hook is not None  # _require_kind found one
            if stmt.code and hook.name == "job_valid":
                self.report(statement_errors.job_valid_fail_code(self.file, stmt.span))
        got = self.expr(stmt.message, scope, STRING)
        if got.name == "FitError" and not got.optional:
            if stmt.code:
                self.report(statement_errors.fit_error_with_code(self.file, stmt.span))
            return
        self.expect(got, STRING, stmt.message.span, "a failure message", stmt.message)

    def _stmt_OrderBy(self, stmt: A.OrderBy, scope: Scope) -> None:
        self.report(statement_errors.order_by_out_of_place(self.file, stmt.span))

    def _stmt_ExprStmt(self, stmt: A.ExprStmt, scope: Scope) -> None:
        if not isinstance(stmt.expr, A.Call):
            self.report(statement_errors.value_not_used(self.file, stmt.span))
        self.expr(stmt.expr, scope)

    def _stmt_If(self, stmt: A.If, scope: Scope) -> None:
        falsy: dict[str, Type] = {}
        all_exit = True
        for cond, body in stmt.branches:
            cond_scope = Scope(scope)
            cond_scope.narrowed.update(falsy)
            self.cond(cond, cond_scope)
            branch = Scope(cond_scope)
            branch.narrowed.update(self.narrowing(cond, True, cond_scope))
            self.block(body, branch)
            all_exit = all_exit and self._always_exits(body)
            falsy = {**falsy, **self.narrowing(cond, False, cond_scope)}
        if stmt.orelse:
            else_scope = Scope(scope)
            else_scope.narrowed.update(falsy)
            self.block(stmt.orelse, else_scope)
        elif all_exit:
            scope.narrowed.update(falsy)

    def _stmt_For(self, stmt: A.For, scope: Scope) -> None:
        it = self.expr(stmt.iter, scope)
        elem = self._iter_type(it, stmt.iter.span)
        body = Scope(scope)
        self._declare_local(body, stmt.var, elem, stmt.var_span, stmt.nid)
        self.ctx.in_loop += 1
        self.block(stmt.body, body)
        self.ctx.in_loop -= 1

    def _stmt_Drain(self, stmt: A.Drain, scope: Scope) -> None:
        q = self.expr(stmt.queue, scope)
        elem = UNKNOWN
        if q.name == "PriorityQueue" and not q.optional:
            elem = q.args[0]
        elif q.name != "unknown":
            self.report(type_errors.drain_needs_queue(self.file, stmt.queue.span, q))
        if stmt.cond is not None:
            self.cond(stmt.cond, scope)
        body = Scope(scope)
        self._declare_local(body, stmt.var, elem, stmt.var_span, stmt.nid)
        self.ctx.in_loop += 1
        self.block(stmt.body, body)
        self.ctx.in_loop -= 1

    def _stmt_While(self, stmt: A.While, scope: Scope) -> None:
        self.cond(stmt.cond, scope)
        body = Scope(scope)
        body.narrowed.update(self.narrowing(stmt.cond, True, scope))
        self.ctx.in_loop += 1
        self.block(stmt.body, body)
        self.ctx.in_loop -= 1
