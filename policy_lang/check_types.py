"""Expression typing: the type of every expression (recorded for the compiler), written types
resolved, expected types checked, and ``none`` narrowed away by conditions.

Optional types (``Job?``) must be narrowed before use: ``x != none`` in an ``if``, an ``and``
chain, a conditional expression or a guard such as ``continue when x == none`` makes ``x``
non-optional where it must be (:meth:`ExpressionTyping.narrowing`).  Calls are typed in
``check_calls.py``.
"""

from __future__ import annotations

from . import ast as A
from . import declaration_errors, type_errors
from .cancel import checkpoint
from .check_core import CHECKPOINT_EVERY, Scope, attribute_path
from .check_names import NameResolution
from .diagnostics import Span
from .env import AttrInfo, builtin_type_arity
from .types import (
    BOOL, FLOAT, INT, NONE, NUMERIC, STRING, UNKNOWN, Type, assignable, fn_of, join, list_of, map_of, substitute,
)


class ExpressionTyping(NameResolution):
    """Types of expressions other than calls, and the checks an expected type makes."""

    def resolve_type(self, t: A.TypeExpr) -> Type:
        name = t.name
        if name == "duration":
            name = "float"
        elif name == "quantity":  # an argument's text, checked by the reader to be a Kubernetes quantity
            name = "string"
        args = tuple(self.resolve_type(a) for a in t.args)
        arity = builtin_type_arity(name)
        info = self.env.types.get(name)
        if arity is None and info is None and name not in self.env.enums:
            known = list(self.env.types) + list(self.env.enums) + ["bool", "int", "float", "string",
                                                                    "duration", "quantity", "list", "map"]
            self.report(declaration_errors.unknown_type(self.file, t.span, t.name, self._hint(t.name, known)))
            return UNKNOWN
        expected = arity if arity is not None else (len(info.params) if info else 0)
        if name == "fn":
            if not args:
                self.report(declaration_errors.fn_type_without_result(self.file, t.span))
                return UNKNOWN
        elif len(args) != expected:
            self.report(declaration_errors.type_arity(self.file, t.span, t.name, expected, len(args)))
            return UNKNOWN
        return Type(name, args, t.optional)

    def expect(self, got: Type, want: Type, span: Span, what: str, expr: A.Expr | None = None) -> bool:
        if got.name == "unknown" or want.name == "unknown":
            return True
        if expr is not None and isinstance(expr, A.Literal) and expr.kind == "string" and want.name in self.env.enums:
            return self._check_enum_literal(expr, want.name)
        if assignable(got, want, self.env.enum_names) or (got.name == "float" and want.name == "duration"):
            return True
        if got.optional and assignable(got.required, want, self.env.enum_names):
            self.report(type_errors.may_be_none(self.file, span, what, got, want))
        else:
            self.report(type_errors.mismatch(self.file, span, what, got, want))
        return False

    def _check_enum_literal(self, lit: A.Literal, enum: str) -> bool:
        values = self.env.enums[enum]
        if lit.value not in values:
            self.report(type_errors.not_an_enum_value(self.file, lit.span, lit.value, enum, values,
                                                        self._hint(str(lit.value), values)))
            return False
        return True

    def narrowing(self, cond: A.Expr, truthy: bool, scope: Scope) -> dict[str, Type]:
        if isinstance(cond, A.Unary) and cond.op == "not":
            return self.narrowing(cond.operand, not truthy, scope)
        if isinstance(cond, A.Binary):
            if cond.op in ("==", "!=") and (self._is_none(cond.right) or self._is_none(cond.left)):
                other = cond.left if self._is_none(cond.right) else cond.right
                path = attribute_path(other)
                t = self.out.types.get(other.nid)
                if path and t is not None and t.optional:
                    non_none = (cond.op == "!=") == truthy
                    if non_none:
                        return {path: t.required}
                return {}
            if cond.op == "and" and truthy:
                return {**self.narrowing(cond.left, True, scope), **self.narrowing(cond.right, True, scope)}
            if cond.op == "or" and not truthy:
                return {**self.narrowing(cond.left, False, scope), **self.narrowing(cond.right, False, scope)}
            if cond.op == "in" and truthy and isinstance(cond.right, A.Name):
                return {}
        return {}

    @staticmethod
    def _is_none(expr: A.Expr) -> bool:
        return isinstance(expr, A.Literal) and expr.kind == "none"

    def cond(self, expr: A.Expr, scope: Scope) -> None:
        t = self.expr(expr, scope, BOOL)
        self.expect(t, BOOL, expr.span, "a condition")

    def expr(self, expr: A.Expr, scope: Scope, expected: Type | None = None) -> Type:
        self.until_checkpoint -= 1
        if self.until_checkpoint <= 0:
            self.until_checkpoint = CHECKPOINT_EVERY
            checkpoint()
        t = getattr(self, "_expr_" + type(expr).__name__)(expr, scope, expected)
        self.out.types[expr.nid] = t
        return t

    def _expr_Literal(self, e: A.Literal, scope: Scope, expected: Type | None) -> Type:
        if e.kind == "string" and expected is not None and expected.required.name in self.env.enums:
            self._check_enum_literal(e, expected.required.name)
            return expected.required
        return {"int": INT, "float": FLOAT, "duration": FLOAT, "string": STRING, "bool": BOOL,
                "none": NONE}[e.kind]

    def _attr_info(self, obj_t: Type, e: A.Attr) -> AttrInfo | None:
        if obj_t.name == "unknown":
            return None
        if obj_t.optional:
            self.report(type_errors.attribute_of_optional(self.file, e.span, e.name, obj_t))
            return None
        info = self.env.types.get(obj_t.name)
        attr = info.attributes.get(e.name) if info else None
        if attr is None:
            candidates = list(info.attributes) + list(info.methods) if info else []
            self.report(type_errors.unknown_attribute(self.file, e.name_span, e.name, obj_t.name,
                                                        self._hint(e.name, candidates)))
            return None
        assert info is not None  # it has the attribute
        if info.params:
            bindings = dict(zip(info.params, obj_t.args))
            attr = AttrInfo(attr.name, substitute(attr.type, bindings), attr.py, attr.writable, attr.doc)
        return attr

    def _expr_Attr(self, e: A.Attr, scope: Scope, expected: Type | None) -> Type:
        obj_t = self.expr(e.obj, scope)
        path = attribute_path(e)
        if path:
            narrowed = scope.narrowed_type(path)
            if narrowed is not None:
                info = self._attr_info(obj_t, e)
                if info is not None:
                    self.out.attrs[e.nid] = info
                return narrowed
        info = self._attr_info(obj_t, e)
        if info is None:
            return UNKNOWN
        self.out.attrs[e.nid] = info
        return info.type

    def _expr_Index(self, e: A.Index, scope: Scope, expected: Type | None) -> Type:
        obj_t = self.expr(e.obj, scope)
        if obj_t.name == "unknown":
            self.expr(e.key, scope)
            return UNKNOWN
        if obj_t.optional:
            self.report(type_errors.index_of_optional(self.file, e.span, obj_t))
            return UNKNOWN
        if obj_t.name == "map":
            key_t = self.expr(e.key, scope, obj_t.args[0])
            self.expect(key_t, obj_t.args[0], e.key.span, "the key", e.key)
            return obj_t.args[1]
        if obj_t.name == "list":
            self.expect(self.expr(e.key, scope), INT, e.key.span, "a list index")
            return obj_t.args[0]
        self.report(type_errors.not_indexable(self.file, e.span, obj_t))
        return UNKNOWN

    def _expr_Unary(self, e: A.Unary, scope: Scope, expected: Type | None) -> Type:
        if e.op == "not":
            self.cond(e.operand, scope)
            return BOOL
        t = self.expr(e.operand, scope)
        if t.name not in NUMERIC and t.name != "unknown":
            self.report(type_errors.not_negatable(self.file, e.span, t))
            return UNKNOWN
        return t

    def _arith(self, op: str, l: Type, r: Type, span: Span) -> Type:
        if "unknown" in (l.name, r.name):
            return UNKNOWN
        if l.optional or r.optional:
            self.report(type_errors.operator_on_optional(self.file, span, op, l, r))
            return UNKNOWN
        if l.name in NUMERIC and r.name in NUMERIC:
            if op == "/":
                return FLOAT
            if op == "%" and (l.name != "int" or r.name != "int"):
                self.report(type_errors.modulo_needs_ints(self.file, span))
            return INT if l.name == r.name == "int" else FLOAT
        if l.name == "Resource":
            if op in "+-" and r.name == "Resource":
                return l
            if op == "*" and r.name in NUMERIC:
                return l
        if op == "+" and l.name == r.name == "string":
            return STRING
        if op == "+" and l.name == r.name == "list" and assignable(r, l):
            return l
        self.report(type_errors.operator_undefined(self.file, span, op, l, r))
        return UNKNOWN

    def _expr_Binary(self, e: A.Binary, scope: Scope, expected: Type | None) -> Type:
        op = e.op
        if op in ("and", "or"):
            self.cond(e.left, scope)
            right_scope = Scope(scope)
            right_scope.narrowed.update(self.narrowing(e.left, op == "and", scope))
            self.cond(e.right, right_scope)
            return BOOL
        if op in ("in", "not in"):
            container = self.expr(e.right, scope)
            item = self.expr(e.left, scope, container.args[0] if container.args else None)
            if container.name in ("list", "map") and not container.optional:
                self.expect(item, container.args[0], e.left.span, "the searched value", e.left)
            elif container.name == "string":
                self.expect(item, STRING, e.left.span, "the searched value", e.left)
            elif container.name != "unknown":
                self.report(type_errors.membership_container(self.file, e.right.span, op, container))
            return BOOL
        if op in ("==", "!="):
            l = self.expr(e.left, scope)
            r = self.expr(e.right, scope, l if l.name in self.env.enums else None)
            if isinstance(e.left, A.Literal) and e.left.kind == "string" and r.required.name in self.env.enums:
                self._check_enum_literal(e.left, r.required.name)
            if not (assignable(l, r, self.env.enum_names) or assignable(r, l, self.env.enum_names)
                    or (l.name in NUMERIC and r.name in NUMERIC)
                    or (l.name == "none" and r.optional) or (r.name == "none" and l.optional)):
                if r.name == "none" or l.name == "none":
                    self.report(type_errors.never_none(self.file, e.span, l if r.name == "none" else r))
                else:
                    self.report(type_errors.not_comparable(self.file, e.span, l, r))
            return BOOL
        if op in ("<", "<=", ">", ">="):
            l = self.expr(e.left, scope)
            r = self.expr(e.right, scope)
            if "unknown" in (l.name, r.name):
                return BOOL
            if l.optional or r.optional:
                self.report(type_errors.operator_on_optional(self.file, e.span, op, l, r))
            elif l.name in NUMERIC and r.name in NUMERIC or l.name == r.name == "string":
                pass
            elif l.name == r.name == "Resource" and op in ("<", "<="):
                pass
            elif l.name == r.name == "Resource":
                self.report(type_errors.resources_ordered(self.file, e.span, op))
            else:
                self.report(type_errors.not_orderable(self.file, e.span, l, r))
            return BOOL
        l = self.expr(e.left, scope)
        r = self.expr(e.right, scope)
        return self._arith(op, l, r, e.span)

    def _expr_Conditional(self, e: A.Conditional, scope: Scope, expected: Type | None) -> Type:
        self.cond(e.cond, scope)
        then_scope, else_scope = Scope(scope), Scope(scope)
        then_scope.narrowed.update(self.narrowing(e.cond, True, scope))
        else_scope.narrowed.update(self.narrowing(e.cond, False, scope))
        a = self.expr(e.then, then_scope, expected)
        b = self.expr(e.orelse, else_scope, expected)
        t = join(a, b)
        if t is None:
            self.report(type_errors.branch_types(self.file, e.span, a, b))
            return UNKNOWN
        return t

    def _elem_expected(self, expected: Type | None, name: str, index: int) -> Type | None:
        if expected is not None and expected.name == name and len(expected.args) > index:
            return expected.args[index]
        return None

    def _expr_ListLit(self, e: A.ListLit, scope: Scope, expected: Type | None) -> Type:
        want = self._elem_expected(expected, "list", 0)
        elem: Type | None = None
        for item in e.items:
            t = self.expr(item, scope, want)
            if want is not None:
                self.expect(t, want, item.span, "a list item", item)
                t = want
            if elem is None:
                elem = t
            else:
                joined = join(elem, t)
                if joined is None:
                    self.report(type_errors.list_item_types(self.file, item.span, elem, t))
                else:
                    elem = joined
        return list_of(elem or want or UNKNOWN)

    def _iter_type(self, t: Type, span: Span) -> Type:
        if t.name in ("list",) and not t.optional:
            return t.args[0]
        if t.name == "map" and not t.optional:
            return t.args[0]
        if t.name != "unknown":
            self.report(type_errors.not_iterable(self.file, span, t, t.name == "PriorityQueue"))
        return UNKNOWN

    def _comprehension_scope(self, var: str, it: A.Expr, cond: A.Expr | None, scope: Scope,
                             node_id: int) -> Scope:
        it_t = self.expr(it, scope)
        elem = self._iter_type(it_t, it.span)
        inner = Scope(scope)
        self._declare_local(inner, var, elem, it.span, node_id)
        if cond is not None:
            self.cond(cond, inner)
            narrowed = Scope(inner)
            narrowed.narrowed.update(self.narrowing(cond, True, inner))
            return narrowed
        return inner

    def _expr_ListComp(self, e: A.ListComp, scope: Scope, expected: Type | None) -> Type:
        inner = self._comprehension_scope(e.var, e.iter, e.cond, scope, e.nid)
        return list_of(self.expr(e.elem, inner, self._elem_expected(expected, "list", 0)))

    def _expr_MapLit(self, e: A.MapLit, scope: Scope, expected: Type | None) -> Type:
        key_want = self._elem_expected(expected, "map", 0)
        value_want = self._elem_expected(expected, "map", 1)
        key_t: Type | None = None
        value_t: Type | None = None
        for k, v in e.entries:
            kt, vt = self.expr(k, scope, key_want), self.expr(v, scope, value_want)
            if key_want is not None:
                self.expect(kt, key_want, k.span, "a map key", k)
                kt = key_want
            if value_want is not None:
                self.expect(vt, value_want, v.span, "a map value", v)
                vt = value_want
            key_t = kt if key_t is None else (join(key_t, kt) or key_t)
            value_t = vt if value_t is None else (join(value_t, vt) or value_t)
        return map_of(key_t or key_want or UNKNOWN, value_t or value_want or UNKNOWN)

    def _expr_MapComp(self, e: A.MapComp, scope: Scope, expected: Type | None) -> Type:
        inner = self._comprehension_scope(e.var, e.iter, e.cond, scope, e.nid)
        k = self.expr(e.key, inner, self._elem_expected(expected, "map", 0))
        v = self.expr(e.value, inner, self._elem_expected(expected, "map", 1))
        return map_of(k, v)

    def _expr_Lambda(self, e: A.Lambda, scope: Scope, expected: Type | None) -> Type:
        want_params = expected.args[:-1] if expected is not None and expected.name == "fn" else ()
        inner = Scope(scope)
        params: list[Type] = []
        for i, (name, texpr, span) in enumerate(e.params):
            if texpr is not None:
                t = self.resolve_type(texpr)
            elif i < len(want_params) and not want_params[i].is_typevar:
                t = want_params[i]
            else:
                self.report(type_errors.lambda_parameter_type(self.file, span, name))
                t = UNKNOWN
            params.append(t)
            self._declare_local(inner, name, t, span, span.nid)
        body = self.expr(e.body, inner, expected.args[-1] if expected is not None and expected.name == "fn" else None)
        return fn_of(params, body)
