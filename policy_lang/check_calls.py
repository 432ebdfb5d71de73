"""Call typing: calls of definitions, session functions and dispatchers, methods, container
methods, function values and the built-ins, each argument checked against its parameter."""

from __future__ import annotations

from . import ast as A
from . import type_errors
from .check_core import Scope
from .check_names import BUILTIN_FUNCTIONS
from .check_types import ExpressionTyping
from .checked import CallInfo, Ref
from .diagnostics import Span
from .env import FuncSig, Param
from .timestamps import LAYOUT as RFC3339_LAYOUT, rfc3339_seconds
from .types import FLOAT, INT, NUMERIC, STRING, UNKNOWN, VOID, Type, assignable, list_of, substitute, unify

# The text formats a schema function's `literal` may name: what the text must be, a test of it, an example.
_LITERAL_FORMATS = {"rfc3339": ("an RFC 3339 time", lambda text: rfc3339_seconds(text) is not None, RFC3339_LAYOUT)}


class CallTyping(ExpressionTyping):
    """The type of a call, and what the compiler needs to call it (``CheckedModule.calls``)."""

    def _expr_Call(self, e: A.Call, scope: Scope, expected: Type | None) -> Type:
        func = e.func
        if isinstance(func, A.Name) and scope.lookup(func.id) is None:
            name = func.id
            if name in BUILTIN_FUNCTIONS and self._top_level(name) is None:
                return self._builtin_call(e, name, scope)
            ref = self._top_level(name)
            if ref is not None and ref.kind in ("def", "dispatch", "function"):
                self.used_names.add(name)
                self._note_module_use(name, ref, func.span)
                self.out.refs[func.nid] = ref
                if ref.kind == "def":
                    if self.current_def is not None:
                        self.call_graph.setdefault(self.current_def, set()).add(name)
                    sig = self._def_sig(name, ref)
                    self.out.calls[e.nid] = CallInfo("def", ref.py, sig, name)
                else:
                    assert ref.sig is not None  # a dispatcher's or function's reference carries its signature
                    sig = ref.sig
                    self.out.calls[e.nid] = CallInfo(ref.kind, ref.py, sig, name)
                    self._check_literal_format(sig, e)
                return self._apply(sig, e, scope, name)
        if isinstance(func, A.Attr):
            obj_t = self.expr(func.obj, scope)
            return self._method_call(e, func, obj_t, scope)
        t = self.expr(func, scope)
        if t.name == "fn" and not t.optional:
            params = tuple(Param(f"arg{i}", p) for i, p in enumerate(t.args[:-1]))
            sig = FuncSig("<function>", params, t.args[-1], "")
            self.out.calls[e.nid] = CallInfo("value", "", sig)
            return self._apply(sig, e, scope, "this function")
        if t.name != "unknown":
            self.report(type_errors.not_callable(self.file, func.span, t))
        for a in e.args:
            self.expr(a, scope)
        return UNKNOWN

    def _check_literal_format(self, sig: FuncSig, e: A.Call) -> None:
        """A literal the function would refuse while the session runs is an error where it is written."""
        first = e.args[0] if e.args else None
        if not sig.literal or not isinstance(first, A.Literal) or first.kind != "string":
            return
        what, valid, example = _LITERAL_FORMATS[sig.literal]
        if not valid(first.value):
            self.report(type_errors.malformed_literal(self.file, first.span, first.value, what, sig.name, example))

    def _def_sig(self, name: str, ref: Ref) -> FuncSig:
        decl = self.out.defs.get(name)
        if decl is None:
            for used in self.out.uses:
                decl = used.defs.get(name) or decl
        names = [p.name for p in decl.params] if decl else [f"arg{i}" for i in range(len(ref.type.args) - 1)]
        params = tuple(Param(n, t) for n, t in zip(names, ref.type.args[:-1]))
        return FuncSig(name, params, ref.type.args[-1], ref.py)

    def _apply(self, sig: FuncSig, e: A.Call, scope: Scope, what: str) -> Type:
        params = list(sig.params)
        supplied: dict[str, tuple[A.Expr, Span]] = {}
        if len(e.args) > len(params):
            self.report(type_errors.too_many_arguments(self.file, e.span, what, len(params), len(e.args)))
        for param, arg in zip(params, e.args):
            supplied[param.name] = (arg, arg.span)
        for kw, value, span in e.kwargs:
            if kw not in {p.name for p in params}:
                self.report(type_errors.unknown_keyword(self.file, span, what, kw,
                                                          self._hint(kw, [p.name for p in params])))
                self.expr(value, scope)
                continue
            if kw in supplied:
                self.report(type_errors.argument_given_twice(self.file, span, kw))
            supplied[kw] = (value, span)
        bindings: dict[str, Type] = {}
        for param in params:
            if param.name not in supplied:
                if not param.optional:
                    self.report(type_errors.missing_argument(self.file, e.span, what, param.name, param.type))
                continue
            arg, span = supplied[param.name]
            want = substitute(param.type, bindings)
            got = self.expr(arg, scope, want)
            if not unify(param.type, got, bindings) or not self._fits(got, substitute(param.type, bindings), arg):
                self.expect(got, substitute(param.type, bindings), arg.span, f"argument '{param.name}' of {what}", arg)
        return substitute(sig.returns, bindings)

    def _fits(self, got: Type, want: Type, arg: A.Expr) -> bool:
        if isinstance(arg, A.Literal) and arg.kind == "string" and want.required.name in self.env.enums:
            return self._check_enum_literal(arg, want.required.name)
        return assignable(got, want, self.env.enum_names) or (got.name == "fn" and want.name == "fn")

    def _method_call(self, e: A.Call, func: A.Attr, obj_t: Type, scope: Scope) -> Type:
        if obj_t.name == "unknown":
            for a in e.args:
                self.expr(a, scope)
            return UNKNOWN
        if obj_t.optional:
            self.report(type_errors.method_of_optional(self.file, func.span, func.name, obj_t))
            return UNKNOWN
        container = self._container_method(obj_t, func.name)
        if container is not None:
            self.out.calls[e.nid] = CallInfo("container", func.name, container, func.name)
            return self._apply(container, e, scope, f"'{func.name}'")
        info = self.env.types.get(obj_t.name)
        sig = info.methods.get(func.name) if info else None
        if sig is None:
            candidates = list(info.methods) + list(info.attributes) if info else []
            suggestion = self._hint(func.name, candidates)
            is_attribute = info is not None and func.name in info.attributes
            self.report(type_errors.unknown_method(self.file, func.name_span, func.name, obj_t.name, is_attribute,
                                                     suggestion))
            for a in e.args:
                self.expr(a, scope)
            return UNKNOWN
        assert info is not None  # it has the method
        if info.params:
            bindings = dict(zip(info.params, obj_t.args))
            sig = FuncSig(sig.name, tuple(Param(p.name, substitute(p.type, bindings), p.optional) for p in sig.params),
                          substitute(sig.returns, bindings), sig.py, sig.doc)
        self.out.calls[e.nid] = CallInfo("method", sig.py, sig, func.name)
        return self._apply(sig, e, scope, f"'{func.name}'")

    @staticmethod
    def _container_method(t: Type, name: str) -> FuncSig | None:
        if t.name == "list":
            elem = t.args[0]
            return {"append": FuncSig("append", (Param("item", elem),), VOID, "append"),
                    "copy": FuncSig("copy", (), t, "copy")}.get(name)
        if t.name == "map":
            k, v = t.args
            return {
                "copy": FuncSig("copy", (), t, "copy"),
                "get": FuncSig("get", (Param("key", k), Param("default", v)), v, "get"),
                "keys": FuncSig("keys", (), list_of(k), "keys"),
                "values": FuncSig("values", (), list_of(v), "values"),
                "remove": FuncSig("remove", (Param("key", k),), VOID, "remove"),
            }.get(name)
        return None

    def _builtin_call(self, e: A.Call, name: str, scope: Scope) -> Type:
        args = [self.expr(a, scope) for a in e.args]
        self.out.calls[e.nid] = CallInfo("builtin", name, None, name)
        if e.kwargs:
            self.report(type_errors.builtin_keyword(self.file, e.kwargs[0][2], name))

        def arity(n: int) -> bool:
            if len(args) != n:
                self.report(type_errors.builtin_arity(self.file, e.span, name, n, len(args)))
                return False
            return True

        if name == "len":
            if arity(1) and args[0].name not in ("list", "map", "string", "PriorityQueue", "unknown"):
                self.report(type_errors.builtin_of(self.file, e.args[0].span, "len", args[0]))
            return INT
        if name in ("max", "min"):
            if len(args) == 1 and args[0].name in ("list", "unknown"):  # the largest / smallest of a list
                element = args[0].args[0] if args[0].args else UNKNOWN
                if element.name not in NUMERIC and element.name != "unknown":
                    self.report(type_errors.builtin_of(self.file, e.args[0].span, name, args[0]))
                    return UNKNOWN
                return INT if element.name == "int" else FLOAT
            if len(args) < 2:
                self.report(type_errors.extremum_arity(self.file, e.span, name))
                return UNKNOWN
            for a, t in zip(e.args, args):
                if t.name not in NUMERIC and t.name != "unknown":
                    self.report(type_errors.builtin_of(self.file, a.span, name, t))
            return INT if all(t.name == "int" for t in args) else FLOAT
        if name == "sum":
            if arity(1) and not (args[0].name == "list" and args[0].args[0].name in NUMERIC):
                self.report(type_errors.sum_needs_numbers(self.file, e.span, args[0]))
            return FLOAT
        if name == "range":
            if arity(1):
                self.expect(args[0], INT, e.args[0].span, "range()'s bound")
            return list_of(INT)
        if name == "str":
            arity(1)
            return STRING
        if name == "int":
            if arity(1) and args[0].name not in NUMERIC + ("unknown",):
                self.report(type_errors.builtin_of(self.file, e.span, "int", args[0]))
            return INT
        if name == "float":
            if arity(1) and args[0].name not in NUMERIC + ("unknown",):
                self.report(type_errors.builtin_of(self.file, e.span, "float", args[0]))
            return FLOAT
        return UNKNOWN
