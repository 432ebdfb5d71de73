"""Hook and definition bodies: a hook's name against the catalogue (or ``execute`` for an
action), its parameters, hooks sharing one body, the ``order by`` form, and what a body must
return on every path; a definition's parameters and result likewise.
"""

from __future__ import annotations

from . import ast as A
from . import declaration_errors, statement_errors, type_errors
from .check_core import Context, Scope
from .check_statements import StatementChecks, hook_result
from .checked import HookInfo
from .env import HookSig
from .walk import preorder

# A declaration hook -> the bound it speaks for: true means the bound reads, of its first
# parameter (the reclaimer), only the queue (docs/hooks.md, "Victim bounds").
BOUND_DECLARATIONS = {"may_reclaim_from_reads_queue": "may_reclaim_from"}


class BodyChecks(StatementChecks):
    """Definitions and hooks, each checked with its parameters in scope."""

    def _check_def(self, decl: A.FuncDef) -> None:
        fn_type = self.out.def_types[decl.name]
        scope = Scope()
        for param, t in zip(decl.params, fn_type.args[:-1]):
            self._declare_local(scope, param.name, t, param.span, param.nid)
        returns = fn_type.args[-1]
        self.current_def = decl.name
        self.call_graph.setdefault(decl.name, set())
        self.ctx = Context(hook=None, returns=returns, func_id=decl.nid)
        if isinstance(decl.body, tuple):
            self.block(decl.body, scope)
            if returns.name != "void" and not self._always_exits(decl.body, returns_only=True):
                self.report(statement_errors.definition_may_not_return(self.file, decl.name_span, decl.name, returns))
        else:
            got = self.expr(decl.body, scope, returns)
            self.expect(got, returns, decl.body.span, f"the result of '{decl.name}'", decl.body)
        self.current_def = None

    def _check_hook(self, decl: A.HookDef) -> None:
        kind = self.module.kind
        sigs: list[HookSig] = []
        for name in decl.names:
            if kind == "action":
                if name != "execute":
                    self.report(declaration_errors.action_hook(self.file, decl.name_span, name))
                    continue
                sigs.append(HookSig("execute", (), "event", None))
            elif kind == "module":
                self.report(declaration_errors.module_hook(self.file, decl.name_span))
            else:
                sig = self.env.hooks.get(name)
                if sig is None:
                    self.report(declaration_errors.unknown_hook(self.file, decl.name_span, name,
                                                      self._hint(name, self.env.hooks)))
                    continue
                sigs.append(sig)
        if not sigs:
            return
        first = sigs[0]
        for other in sigs[1:]:
            if other.params != first.params or other.kind != first.kind:
                self.report(declaration_errors.hooks_cannot_share_a_body(self.file, decl.name_span, first.name,
                                                                         other.name))
                return
        key_form = first.kind == "order" and len(decl.params) == 1 and len(first.params) == 2
        if not key_form and len(decl.params) != len(first.params):
            self.report(declaration_errors.hook_parameter_count(self.file, decl.name_span, first.name, first.params,
                                                      len(decl.params)))
            return
        scope = Scope()
        for (pname, pspan), ptype in zip(decl.params, first.params):
            self._declare_local(scope, pname, ptype, pspan, pspan.nid)
        for sig in sigs:
            self.out.hooks.append(HookInfo(decl, sig.name, sig, key_form))
        self.ctx = Context(hook=first, func_id=decl.nid)
        self.current_def = None
        if key_form:
            self._check_key_order(decl, scope)
            return
        if isinstance(decl.body, tuple):
            self.block(decl.body, scope)
            if first.kind in ("bool", "score", "scores", "hyper-scores", "gradients") or (first.kind == "order"):
                if not self._always_exits(decl.body, returns_only=True):
                    self.report(statement_errors.hook_may_not_return(self.file, decl.name_span, first.name,
                                                               hook_result(first)))
        else:
            want = hook_result(first)
            if want is None:
                self.report(statement_errors.hook_needs_block(self.file, decl.body.span, first.name, first.kind))
                return
            got = self.expr(decl.body, scope, want)
            self.expect(got, want, decl.body.span, f"the result of hook '{first.name}'", decl.body)

    def _check_bound_declarations(self) -> None:
        """A plugin that declares, always, that its bound reads of the actor only its queue
        (``BOUND_DECLARATIONS``) has a bound whose first parameter is read as ``.queue`` or
        ``.queue_name`` only, and never handed on whole (to a definition, a map, a comparison):
        what reclaim relies on to share the bound's answers among a queue's jobs.  A declaration
        that depends on the plugin's state (drf's, true without the hierarchy) is not checked."""
        hooks = [d for d in self.module.decls if isinstance(d, A.HookDef)]
        for declaration, bound in BOUND_DECLARATIONS.items():
            declares = [d for d in hooks if declaration in d.names]
            if not (declares and _always_true(declares[0].body)):
                continue
            for decl in hooks:
                if bound not in decl.names or not decl.params:
                    continue
                actor = decl.params[0][0]
                nodes = list(preorder(decl.body))
                as_queue = {id(n.obj) for n in nodes if isinstance(n, A.Attr) and n.name in ("queue", "queue_name")}
                for node in nodes:
                    if isinstance(node, A.Name) and node.id == actor and id(node) not in as_queue:
                        self.report(declaration_errors.bound_reads_more(self.file, node.span, bound, declaration,
                                                                        actor))

    def _check_key_order(self, decl: A.HookDef, scope: Scope) -> None:
        body = decl.body
        if not (isinstance(body, tuple) and len(body) == 1 and isinstance(body[0], A.OrderBy)):
            self.report(statement_errors.key_order_body(self.file, decl.name_span))
            return
        for key, _desc in body[0].keys:
            t = self.expr(key, scope)
            if t.name not in ("int", "float", "bool", "string", "unknown") or t.optional:
                self.report(type_errors.order_key_type(self.file, key.span, t))


def _always_true(body: tuple[A.Stmt, ...] | A.Expr) -> bool:
    """A declaration's body that is the literal ``true`` (``on h = true``, or ``return true``)."""
    value = body[0].value if isinstance(body, tuple) and len(body) == 1 and isinstance(body[0], A.Return) else body
    return isinstance(value, A.Literal) and value.value is True
