"""Types of the policy language and the rules for using one where another is expected.

A type is a name with arguments and an optional flag: ``int``, ``Resource``,
``list[Task]``, ``map[Queue, Resource]``, ``Job?``, ``fn[Task, Task, bool]``
(parameters then result).  Single capital letters (``T``, ``K``, ``V``) are
type variables in standard-library signatures.  Enumerations (``TaskStatus``)
are strings whose literal values the checker verifies.
"""

from __future__ import annotations

from dataclasses import dataclass

NUMERIC = ("int", "float")


@dataclass(frozen=True)
class Type:
    name: str
    args: tuple["Type", ...] = ()
    optional: bool = False

    def __str__(self) -> str:
        if self.name == "fn":
            params = ", ".join(str(a) for a in self.args[:-1])
            text = f"fn({params}) -> {self.args[-1]}"
            return f"({text})?" if self.optional else text
        text = self.name + (f"[{', '.join(str(a) for a in self.args)}]" if self.args else "")
        return text + ("?" if self.optional else "")

    @property
    def required(self) -> "Type":
        return Type(self.name, self.args, False) if self.optional else self

    def maybe(self) -> "Type":
        return self if self.optional or self.name in ("none", "unknown") else Type(self.name, self.args, True)

    @property
    def is_typevar(self) -> bool:
        return len(self.name) == 1 and self.name.isupper()


BOOL, INT, FLOAT, STRING = Type("bool"), Type("int"), Type("float"), Type("string")
NONE, UNKNOWN, VOID = Type("none"), Type("unknown"), Type("void")
TASK, NODE = Type("Task"), Type("Node")


def list_of(t: Type) -> Type:
    return Type("list", (t,))


def map_of(k: Type, v: Type) -> Type:
    return Type("map", (k, v))


def fn_of(params: list[Type], result: Type) -> Type:
    return Type("fn", tuple(params) + (result,))


class TypeSyntaxError(ValueError):
    pass


def parse_type(text: str) -> Type:
    """Parse the schema spelling of a type: ``map[Queue, Resource]?``, ``fn[Task, bool]``."""
    text = text.strip()
    pos = 0

    def parse_one() -> Type:
        nonlocal pos
        start = pos
        while pos < len(text) and (text[pos].isalnum() or text[pos] == "_"):
            pos += 1
        name = text[start:pos]
        if not name:
            raise TypeSyntaxError(f"bad type {text!r}")
        args: list[Type] = []
        if pos < len(text) and text[pos] == "[":
            pos += 1
            while True:
                while text[pos] == " ":
                    pos += 1
                args.append(parse_one())
                while pos < len(text) and text[pos] == " ":
                    pos += 1
                if text[pos] == ",":
                    pos += 1
                    continue
                if text[pos] == "]":
                    pos += 1
                    break
                raise TypeSyntaxError(f"bad type {text!r}")
        optional = pos < len(text) and text[pos] == "?"
        if optional:
            pos += 1
        return Type(name, tuple(args), optional)

    result = parse_one()
    if pos != len(text):
        raise TypeSyntaxError(f"bad type {text!r}")
    return result


def substitute(t: Type, bindings: dict[str, Type]) -> Type:
    if t.is_typevar and t.name in bindings:
        bound = bindings[t.name]
        return bound.maybe() if t.optional else bound
    if not t.args:
        return t
    return Type(t.name, tuple(substitute(a, bindings) for a in t.args), t.optional)


def unify(pattern: Type, actual: Type, bindings: dict[str, Type]) -> bool:
    """Bind type variables of ``pattern`` so that ``actual`` fits it."""
    if pattern.is_typevar:
        if actual.name == "unknown":
            return True
        target = actual.required if pattern.optional else actual
        if pattern.name in bindings:
            return assignable(target, bindings[pattern.name])
        bindings[pattern.name] = target
        return True
    if actual.name == "none":
        return pattern.optional
    if actual.name == "unknown":
        return True
    if pattern.name != actual.name and not assignable(actual, substitute(pattern, bindings)):
        return False
    if actual.optional and not pattern.optional:
        return False
    if pattern.name != actual.name:
        return True
    if len(pattern.args) != len(actual.args):
        return False
    return all(unify(p, a, bindings) for p, a in zip(pattern.args, actual.args))


def assignable(actual: Type, expected: Type, enums: frozenset = frozenset()) -> bool:
    """Can a value of type ``actual`` be used where ``expected`` is required?"""
    if expected.name in ("any",) or actual.name == "unknown":
        return True
    if actual.name == "none":
        return expected.optional or expected.name == "none"
    if actual.optional and not expected.optional:
        return False
    if actual.name == expected.name:
        if len(actual.args) != len(expected.args):
            return False
        return all(a.name == "unknown" or _invariant(a, e) for a, e in zip(actual.args, expected.args))
    if actual.name == "int" and expected.name == "float":
        return True
    if actual.name in enums and expected.name == "string":
        return True
    if actual.name == "string" and expected.name in enums:
        return True
    return False


def _invariant(a: Type, e: Type) -> bool:
    if a.name == "unknown" or e.name == "any":
        return True
    return (a.name == e.name and a.optional == e.optional and len(a.args) == len(e.args)
            and all(_invariant(x, y) for x, y in zip(a.args, e.args)))


def join(a: Type, b: Type) -> Type | None:
    """The type of ``c if x else d``: the wider of the two, or None if unrelated."""
    if a.name == "none":
        return b.maybe()
    if b.name == "none":
        return a.maybe()
    if assignable(a, b):
        return b.maybe() if a.optional else b
    if assignable(b, a):
        return a.maybe() if b.optional else a
    return None
