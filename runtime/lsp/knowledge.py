"""What an editor asks about a policy or a bundle manifest, answered from what the checker knows.

Each function takes the text of a document (an unsaved buffer, not the file
on disk) and a 0-based position, and answers in plain data; ``server`` turns
the answers into Language Server Protocol messages.  Nothing here may raise
on a half-typed file: a question fumarole cannot answer gets an empty answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from fumarole.policy_lang import ast as A
from fumarole.policy_lang.checker import BUILTIN_FUNCTIONS, CheckedModule
from fumarole.policy_lang.driver import check_files, check_module
from fumarole.policy_lang.codes import CODES
from fumarole.policy_lang.walk import preorder
from fumarole.policy_lang.diagnostics import FumaroleError, Span
from fumarole.policy_lang.env import Environment
from fumarole.policy_lang.fmt import expr_text, type_text
from fumarole.policy_lang.parser import parse
from fumarole.policy_lang.types import Type
from fumarole.runtime.bundles.environment import STDLIB, hooks_document, load_environment
from fumarole.runtime.bundles.library import policy_files
from fumarole.runtime.ingest.source import read_text

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
HEADER = re.compile(r"^(plugin|action|module)\s+([A-Za-z_]\w*)", re.MULTILINE)


@dataclass(frozen=True)
class Item:
    """A completion: the text to insert, what it is, and its documentation."""

    label: str
    kind: str      # attribute, method, hook, plugin, action, module, argument, function, variable, type
    detail: str = ""
    doc: str = ""


@dataclass(frozen=True)
class Place:
    """A range in a file, 0-based lines and columns (LSP's convention), end exclusive."""

    path: Path
    line: int
    col: int
    end_line: int
    end_col: int


@lru_cache(maxsize=1)
def environment() -> Environment:
    return load_environment()


# -- words and contexts --------------------------------------------------------------------------

def word_at(text: str, line: int, col: int) -> tuple[str, int, int] | None:
    """The identifier under a 0-based position, with its start and end columns."""
    lines = text.splitlines()
    if not 0 <= line < len(lines):
        return None
    for match in WORD.finditer(lines[line]):
        if match.start() <= col <= match.end():
            return match.group(), match.start(), match.end()
    return None


def _prefix(text: str, line: int, col: int) -> str:
    lines = text.splitlines()
    return lines[line][:col] if 0 <= line < len(lines) else ""


# -- types of what stands before a dot -----------------------------------------------------------

def _checked(text: str, path: Path) -> CheckedModule | None:
    try:
        return check_module(environment(), parse(text, str(path)), _modules_for(path))
    except FumaroleError:
        return None
    except (RecursionError, ValueError):
        return None


def _modules_for(path: Path) -> dict[str, CheckedModule]:
    """The modules a policy can `use`: the standard library's and its bundle folder's, checked as
    a bundle checks them (each over the modules it uses, by the language driver)."""
    files: list[tuple[str, str]] = []
    for file in _policy_files_near(path):
        try:
            text = read_text(file)
        except FumaroleError:
            continue
        header = HEADER.search(text)
        if header and header.group(1) == "module":
            files.append((str(file), text))
    return dict(_checked_modules(tuple(files)))


@lru_cache(maxsize=64)
def _checked_file(file: str, text: str) -> CheckedModule | None:
    """:func:`_checked` of a file on disk, kept while its text is unchanged."""
    return _checked(text, Path(file))


@lru_cache(maxsize=8)
def _checked_modules(files: tuple[tuple[str, str], ...]) -> dict[str, CheckedModule]:
    """The modules of these (file, text) pairs that checked without errors, by name."""
    try:
        result = check_files(environment(), files)
    except (RecursionError, ValueError):
        return {}
    return {c.module.name: c for c in result.checked if c.module.kind == "module" and c.ok}


def _policy_files_near(path: Path) -> list[Path]:
    folder = _bundle_folder(path)
    own = sorted(folder.rglob("*.policy")) if folder else []
    return own + policy_files(STDLIB)


def _bundle_folder(path: Path) -> Path | None:
    for folder in [path.parent, *path.parent.parents][:4]:
        if (folder / "bundle.yaml").is_file():
            return folder
    return None


def _expressions(node: object):
    """Every expression node inside a module, statement or expression."""
    if isinstance(node, (A.Name, A.Literal, A.Attr, A.Call, A.Index, A.Unary, A.Binary, A.Conditional,
                         A.ListLit, A.ListComp, A.MapLit, A.MapComp, A.Lambda)):
        yield node
    if isinstance(node, (list, tuple)):
        for item in node:
            yield from _expressions(item)
    elif hasattr(node, "__dataclass_fields__") and not isinstance(node, (A.TypeExpr, Span)):
        for name in node.__dataclass_fields__:
            if name not in ("span", "name_span", "var_span", "source"):
                yield from _expressions(getattr(node, name))


def type_before_dot(text: str, path: Path, line: int, dot_col: int) -> Type | None:
    """The type of the expression that ends just before a ``.`` at (line, dot_col), 0-based.

    The text after the dot is what is being typed, so it is cut, and the rest
    of the buffer is checked as it stands: the checker's side table then has
    the type of the expression ending there.
    """
    lines = text.splitlines()
    if not 0 <= line < len(lines):
        return None
    cut = lines[line][:dot_col]
    rest = lines[line][dot_col:]
    tail = re.match(r"\.\w*", rest)
    lines[line] = cut + (rest[tail.end():] if tail else rest)
    checked = _checked("\n".join(lines) + "\n", path)
    if checked is None:
        return None
    best: tuple[tuple[int, int], Type] | None = None
    for node in _expressions(checked.module):
        span = node.span
        if span.end_line == line + 1 and span.end_col == dot_col + 1 and node.nid in checked.types:
            width = (span.end_line - span.line, span.end_col - span.col)
            if best is None or width > best[0]:
                best = (width, checked.types[node.nid])
    return best[1] if best else None


# -- completion -----------------------------------------------------------------------------------

def complete_policy(text: str, path: Path, line: int, col: int) -> list[Item]:
    prefix = _prefix(text, line, col)
    env = environment()
    if re.match(r"^\s*on\s+[\w, ]*$", prefix):
        return [Item(name, "hook", f"{sig.kind} ({', '.join(map(str, sig.params))})", hook_doc(name))
                for name, sig in sorted(env.hooks.items())]
    if re.match(r"^\s*use\s+\w*$", prefix):
        return [Item(name, "module") for name in sorted(_module_names(path))]
    dotted = re.search(r"\.(\w*)$", prefix)
    if dotted:
        owner = type_before_dot(text, path, line, dotted.start())
        return members(owner) if owner is not None else []
    bare = re.search(r"(?<![\w.])([A-Za-z_]\w*)?$", prefix)  # a name begun, or none yet (asked for)
    if bare and not re.match(r"^\s*(plugin|action|module)\s", prefix):
        begun = bare.group(1) or ""
        return [item for item in names_in_scope(text, path, line) if item.label.startswith(begun)]
    return []


def names_in_scope(text: str, path: Path, line: int) -> list[Item]:
    """What a bare name can be at a 0-based line: the parameters and local names of the hook or
    definition around it, the module's arguments, constants and definitions, those of the modules it
    uses, and the standard library's globals, functions and types."""
    env = environment()
    module = _parsed(text, path)
    if module is None:  # the line being typed is usually what does not parse yet: read the file without it
        lines = text.splitlines()
        if 0 <= line < len(lines):
            module = _parsed("\n".join(lines[:line] + [""] + lines[line + 1:]) + "\n", path)
    items: dict[str, Item] = {}

    def add(item: Item) -> None:
        items.setdefault(item.label, item)

    if module is not None:
        for decl in module.decls:
            if isinstance(decl, (A.HookDef, A.FuncDef)) and decl.span.line <= line + 1 < decl.span.end_line:
                for name in _locals(decl):
                    add(Item(name, "variable"))
        for decl, doc in _documented_declarations(module):
            add(Item(decl.name, _DECLARED_KIND[type(decl)], _signature(decl), doc))
        used = {d.name for d in module.decls if isinstance(d, A.Use)}
        for name, checked in _modules_for(path).items():
            if name in used:
                for decl, doc in _documented_declarations(checked.module):
                    add(Item(decl.name, _DECLARED_KIND[type(decl)], _signature(decl), doc))
    for name, g in sorted(env.globals.items()):
        add(Item(name, "variable", str(g.type), g.doc))
    for name, fn in sorted(env.functions.items()):
        add(Item(name, "function", _function_detail(fn.params, fn.returns), fn.doc))
    for name in BUILTIN_FUNCTIONS:
        add(Item(name, "function", "built-in"))
    for name, info in sorted(env.types.items()):
        add(Item(name, "type", "type", info.doc))
    return sorted(items.values(), key=lambda item: item.label)


_DECLARED_KIND = {A.ArgDecl: "argument", A.ConstDecl: "variable", A.FuncDef: "function"}


def _parsed(text: str, path: Path) -> A.Module | None:
    try:
        return parse(text, str(path))
    except (FumaroleError, RecursionError, ValueError):
        return None


def _documented_declarations(module: A.Module) -> list[tuple[A.ArgDecl | A.ConstDecl | A.FuncDef, str]]:
    """The module's arguments, constants and definitions, each with the comment written above it."""
    lines = module.source.splitlines()
    out = []
    for decl in module.decls:
        if isinstance(decl, (A.ArgDecl, A.ConstDecl, A.FuncDef)):
            out.append((decl, _comment_above(lines, decl.span.line - 1)))
    return out


def _comment_above(lines: list[str], index: int) -> str:
    """The ``#`` lines right above a 0-based line, as text."""
    comment: list[str] = []
    for above in reversed(lines[:index]):
        stripped = above.strip()
        if not stripped.startswith("#"):
            break
        comment.insert(0, stripped.lstrip("#").strip())
    return " ".join(comment)


def _locals(decl: A.HookDef | A.FuncDef) -> list[str]:
    """Parameters and the names bound inside a hook or definition (let, for, drain, comprehensions)."""
    names = [name for name, _span in decl.params] if isinstance(decl, A.HookDef) else [p.name for p in decl.params]
    for node in preorder(decl.body):
        if isinstance(node, A.Let):
            names.append(node.name)
        elif isinstance(node, (A.For, A.Drain, A.ListComp)):
            names.append(node.var)
    return names


def _signature(decl: A.ArgDecl | A.ConstDecl | A.FuncDef) -> str:
    if isinstance(decl, A.ArgDecl):
        default = f" = {expr_text(decl.default)}" if decl.default is not None else ""
        key = f' from "{decl.key}"' if decl.key else ""
        reading = (f' split "{decl.split}"' if decl.split is not None else "") + (" strict" if decl.strict else "") + \
            (" asserted" if decl.asserted else "")
        return f"arg {decl.name}: {type_text(decl.type)}{default}{key}{reading}"
    if isinstance(decl, A.ConstDecl):
        declared = f": {type_text(decl.type)}" if decl.type is not None else ""
        return f"let {decl.name}{declared} = {expr_text(decl.value)}"
    params = ", ".join(f"{p.name}: {type_text(p.type)}" for p in decl.params)
    return f"def {decl.name}({params}) -> {type_text(decl.returns)}"


def _function_detail(params, returns) -> str:
    return f"({', '.join(f'{p.name}: {p.type}' for p in params)}) -> {returns}"


def members(owner: Type) -> list[Item]:
    info = environment().types.get(owner.required.name)
    if info is None:
        return []
    items = [Item(name, "attribute", str(a.type), a.doc) for name, a in sorted(info.attributes.items())]
    items += [Item(name, "method", f"({', '.join(f'{p.name}: {p.type}' for p in m.params)}) -> {m.returns}", m.doc)
              for name, m in sorted(info.methods.items())]
    return items


def _module_names(path: Path) -> set[str]:
    return {kind_name[1] for kind_name in _declared(path) if kind_name[0] == "module"}


def _declared(path: Path) -> dict[tuple[str, str], Path]:
    """(kind, name) -> file, for every policy of the bundle folder and the standard library."""
    out: dict[tuple[str, str], Path] = {}
    for file in _policy_files_near(path):
        try:
            header = HEADER.search(read_text(file))
        except FumaroleError:
            continue
        if header:
            out.setdefault((header.group(1), header.group(2)), file)
    return out


def complete_manifest(text: str, path: Path, line: int, col: int) -> list[Item]:
    prefix = _prefix(text, line, col)
    declared = _declared(path)
    if re.search(r"name:\s*\w*$", prefix):
        return [Item(name, "plugin", str(file)) for (kind, name), file in sorted(declared.items())
                if kind == "plugin"]
    if re.match(r"^\s*(actions:.*|-\s*\w*)$", prefix) and _in_actions(text, line, prefix):
        return [Item(name, "action", str(file)) for (kind, name), file in sorted(declared.items())
                if kind == "action"]
    plugin = _plugin_of_arguments(text, line, prefix)
    if plugin is not None and plugin in {name for kind, name in declared if kind == "plugin"}:
        return [Item(key, "argument", detail) for key, detail in _argument_keys(declared[("plugin", plugin)])]
    return []


def _in_actions(text: str, line: int, prefix: str) -> bool:
    if "actions:" in prefix:
        return True
    for above in reversed(text.splitlines()[:line]):
        if re.match(r"^\S", above):
            return above.startswith("actions:")
    return False


def _plugin_of_arguments(text: str, line: int, prefix: str) -> str | None:
    """The plugin whose ``arguments`` the cursor is in, on this line or a line above it."""
    lines = text.splitlines()
    here = re.search(r"name:\s*(\w+).*arguments:\s*\{[^}]*$", prefix)
    if here:
        return here.group(1)
    for above in reversed(lines[:line]):
        found = re.search(r"name:\s*(\w+)", above)
        if found:
            return found.group(1) if "arguments" in "".join(lines[lines.index(above):line + 1]) else None
    return None


def _argument_keys(file: Path) -> list[tuple[str, str]]:
    checked = _checked_file(str(file), read_text(file))
    if checked is None:
        return []
    keys = []
    for name, decl in checked.args.items():
        key = decl.key or name
        keys.append((key, f"{name}: {checked.arg_types.get(name, '')}"))
    return sorted(keys)


# -- hover ----------------------------------------------------------------------------------------

def hover_policy(text: str, path: Path, line: int, col: int) -> str | None:
    found = word_at(text, line, col)
    if found is None:
        return None
    word, start, _end = found
    env = environment()
    prefix = _prefix(text, line, start)
    if re.match(r"^\s*on\s+[\w, ]*$", prefix) and word in env.hooks:
        return hook_doc(word)
    if prefix.endswith("."):
        owner = type_before_dot(text, path, line, start - 1)
        owner_name = owner.required.name if owner is not None else ""
        info = env.types.get(owner_name) if owner is not None else None
        if info is not None and word in info.attributes:
            attr = info.attributes[word]
            return f"`{owner_name}.{word}: {attr.type}`\n\n{attr.doc}".rstrip()
        if info is not None and word in info.methods:
            method = info.methods[word]
            return f"`{owner_name}.{word}(...) -> {method.returns}`\n\n{method.doc}".rstrip()
        return None
    declared = _declared_here(text, path, word)
    if declared is not None:
        return declared
    if word in env.globals:
        return f"`{word}: {env.globals[word].type}`\n\n{env.globals[word].doc}".rstrip()
    if word in env.functions:
        fn = env.functions[word]
        params = ", ".join(f"{p.name}: {p.type}" for p in fn.params)
        return f"`{word}({params}) -> {fn.returns}`\n\n{fn.doc}".rstrip()
    if word in env.types:
        info = env.types[word]
        listed = ", ".join(sorted(info.attributes)[:12]) + (", ..." if len(info.attributes) > 12 else "")
        return (f"**type** `{word}`\n\n{info.doc}".rstrip()
                + (f"\n\nattributes: {listed}" if info.attributes else ""))
    if word in BUILTIN_TYPES:
        return f"**type** `{word}`\n\n{BUILTIN_TYPES[word]}"
    return _name_type(text, path, line, start, word)


# The language's own types (docs/language.md, "Types").
BUILTIN_TYPES = {
    "int": "a whole number",
    "float": "a number with a fraction; times (seconds since the epoch) and durations are floats",
    "duration": "seconds, as a float, written `10m`, `2h`, `90s`",
    "quantity": "an argument's Kubernetes quantity (`250m`, `1.5Gi`), a string to the policy",
    "string": "text: compare with `==` and `<`, test substrings with `in`, join with `+`",
    "bool": "`true` or `false`",
    "list": "`list[T]`: a list of values of type T",
    "map": "`map[K, V]`: a map from keys of type K to values of type V",
    "fn": "`fn[A, ..., R]`: a function taking A, ... and returning R",
}


def _declared_here(text: str, path: Path, word: str) -> str | None:
    """Hover for an argument, constant or definition of this module or a module it uses."""
    module = _parsed(text, path)
    if module is None:
        return None
    modules = [module]
    used = {d.name for d in module.decls if isinstance(d, A.Use)}
    modules += [checked.module for name, checked in _modules_for(path).items() if name in used]
    for owner in modules:
        for decl, doc in _documented_declarations(owner):
            if decl.name == word:
                where = "" if owner is module else f" (module `{owner.name}`)"
                return f"`{_signature(decl)}`{where}" + (f"\n\n{doc}" if doc else "")
    return None


def _name_type(text: str, path: Path, line: int, col: int, word: str) -> str | None:
    """A local name's type (a parameter, let, loop variable), as the checker inferred it."""
    checked = _checked(text, path)
    if checked is None:
        return None
    for node in _expressions(checked.module):
        if (isinstance(node, A.Name) and node.id == word and node.span.line == line + 1
                and node.span.col == col + 1 and node.nid in checked.types):
            return f"`{word}: {checked.types[node.nid]}`"
    for decl in checked.module.decls:  # a parameter, where it is declared
        if decl.span.line == line + 1 and isinstance(decl, A.HookDef) and decl.names[0] in environment().hooks:
            names = [name for name, _span in decl.params]
            if word in names:
                return f"`{word}: {environment().hooks[decl.names[0]].params[names.index(word)]}`"
        if decl.span.line == line + 1 and isinstance(decl, A.FuncDef):
            for param in decl.params:
                if param.name == word:
                    return f"`{word}: {type_text(param.type)}`"
    for node in preorder(checked.module.decls):  # where a let names it: the type of its value
        if (isinstance(node, A.Let) and node.name == word and node.span.line == line + 1
                and node.value.nid in checked.types):
            return f"`{word}: {checked.types[node.value.nid]}`"
    return None


def hook_doc(name: str) -> str:
    """A hook's signature, kind and how the session combines its plugins' answers (docs/hooks.md)."""
    env = environment()
    sig = env.hooks[name]
    lines = [f"**hook** `{name}({', '.join(map(str, sig.params))})`: {sig.kind}"]
    for dispatcher, combine in _dispatchers_of(name):
        rule = combinator_rule(combine)
        lines.append(f"\n`{dispatcher}` combines with `{combine}`" + (f": {rule}" if rule else ""))
    return "\n".join(lines)


def _dispatchers_of(hook: str) -> list[tuple[str, str]]:
    dispatch = hooks_document().get("dispatch", {})
    return [(name, spec["combine"]) for name, spec in dispatch.items() if spec.get("hook") == hook]


@lru_cache(maxsize=1)
def _doc(name: str) -> str:
    try:
        return resources.files("fumarole.docs").joinpath(name).read_text()
    except (FileNotFoundError, ModuleNotFoundError, OSError):
        return ""


def combinator_rule(combine: str) -> str:
    """The combinator's row of the table in docs/hooks.md: what the rule does."""
    for row in _doc("hooks.md").splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0] == f"`{combine}`":
            return cells[2]
    return ""


def code_doc(code: str) -> str:
    """A diagnostic code's title and its explanation in docs/diagnostics.md."""
    title = CODES[code].title if code in CODES else "diagnostic"
    doc = _doc("diagnostics.md")
    section = re.search(rf"^### {code}\b[^\n]*\n+(.*?)(?=\n\S*`|\n#|\Z)", doc, re.MULTILINE | re.DOTALL)
    text = section.group(1).strip() if section else ""
    return f"**{code}** {title}" + (f"\n\n{text}" if text else "")


# -- definitions and references ----------------------------------------------------------------

def definition(text: str, path: Path, line: int, col: int) -> list[Place]:
    found = word_at(text, line, col)
    if found is None:
        return []
    word = found[0]
    here = _declarations(text, path).get(word)
    if here is not None:
        return [here]
    for file in _used_module_files(text, path):
        try:
            place = _declarations(read_text(file), file).get(word)
        except FumaroleError:
            continue
        if place is not None:
            return [place]
    return []


def manifest_definition(text: str, path: Path, line: int, col: int) -> list[Place]:
    """From a plugin or action named in bundle.yaml to the file that declares it."""
    found = word_at(text, line, col)
    if found is None:
        return []
    declared = _declared(path)
    for kind in ("plugin", "action", "module"):
        file = declared.get((kind, found[0]))
        if file is not None:
            header = HEADER.search(read_text(file))
            line_no = read_text(file).count("\n", 0, header.start()) if header else 0
            return [Place(file, line_no, 0, line_no, len(header.group()) if header else 0)]
    return []


def _declarations(text: str, path: Path) -> dict[str, Place]:
    try:
        module = parse(text, str(path))
    except (FumaroleError, RecursionError):
        return {}
    out: dict[str, Place] = {}
    for decl in module.decls:
        name = getattr(decl, "name", None)
        if isinstance(name, str):
            out.setdefault(name, _name_place(text, path, decl.span, name))
    return out


def _name_place(text: str, path: Path, span: Span, name: str) -> Place:
    """Where ``name`` is written in the declaration starting at ``span`` (its keyword comes first)."""
    row = text.splitlines()[span.line - 1] if 0 < span.line <= len(text.splitlines()) else ""
    found = re.compile(rf"\b{re.escape(name)}\b").search(row, max(span.col - 1, 0))
    col = found.start() if found else span.col - 1
    return Place(path, span.line - 1, col, span.line - 1, col + len(name))


def _used_module_files(text: str, path: Path) -> list[Path]:
    used = set(re.findall(r"^use\s+(\w+)", text, re.MULTILINE))
    return [file for (kind, name), file in _declared(path).items() if kind == "module" and name in used]


def references(text: str, path: Path, line: int, col: int) -> list[Place]:
    """Where the name under the cursor is declared and used in this file (a file that does not
    parse: every whole-word occurrence outside comments and strings)."""
    found = word_at(text, line, col)
    if found is None:
        return []
    word = found[0]
    try:
        module = parse(text, str(path))
    except (FumaroleError, RecursionError):
        return _occurrences(text, path, word)
    places = [place for name, place in _declarations(text, path).items() if name == word]
    places += [Place(path, n.span.line - 1, n.span.col - 1, n.span.end_line - 1, n.span.end_col - 1)
               for n in _expressions(module) if isinstance(n, A.Name) and n.id == word]
    return sorted(set(places), key=lambda p: (p.line, p.col))


def _occurrences(text: str, path: Path, word: str) -> list[Place]:
    out = []
    for number, row in enumerate(text.splitlines()):
        code = re.sub(r'"([^"\\]|\\.)*"', lambda m: " " * len(m.group()), row).split("#", 1)[0]
        for match in re.finditer(rf"\b{re.escape(word)}\b", code):
            out.append(Place(path, number, match.start(), number, match.end()))
    return out
