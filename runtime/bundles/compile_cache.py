"""Compiled policy libraries kept on disk, so a process starts without parsing and compiling.

Compiling the standard library (Lark parse, check, compile to code objects) is
most of a short run's time and gives the same result every time for the same
inputs.  Like Jinja2's bytecode cache, an entry keeps the compiler's output:
each policy's code object (``marshal``), its positions and signatures, the
checked modules other policies are checked and compiled against, and the
warnings, under a key hashing everything the output depends on (the sources
and their names, a base library's key, fumarole's version, the Python
implementation and version, and the compiler's own files).  A second kind of
entry keeps what *checking* a set of files gave (``fumarole check`` of the
standard library: each file's checked module and the diagnostics).

An entry is executable code, so it is read only from a place no other account
can write (``policy_lang/cache_folder.py``): the folder must be ours and
writable by nobody else (we create it 0700), the file ours, a regular file,
not a link, writable by nobody else.
Entries are written to a temporary file and renamed.  An entry that is
missing, unreadable, truncated, corrupt (SHA-256 over its body), of another
key or holding anything but the plain data we write (a restricted unpickler
admits only the policy language's data classes and Python syntax nodes; every
loaded object's type is checked) is ignored and rewritten; an unwritable
folder means running without the cache.  Nothing here ever raises.
"""

from __future__ import annotations

import ast as py
import dataclasses
import hashlib
import io
import marshal
import os
import pickle
import sys
import types
from dataclasses import dataclass
from functools import lru_cache
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping

from fumarole.policy_lang.cache_folder import private_folder, read_private_file, write_private_file
from fumarole.policy_lang.compiled import CompiledModule
from fumarole.policy_lang.diagnostics import Diagnostic

if TYPE_CHECKING:  # the checker is imported only when checked modules are written or read
    from fumarole.policy_lang.checked import CheckedModule

FORMAT = b"fumarole compiled library 1\n"
CHECKED_FORMAT = b"fumarole checked files 1\n"
CHECKED_MARK = ".checked"  # after the key: an entry of checked files (CheckedFiles), not of a library
ENTRY_SUFFIX = ".library"
KEEP_ENTRIES = 32  # the newest entries kept; older ones are removed when a new one is written
_DIGEST_SIZE = hashlib.sha256().digest_size

# The data classes an entry may hold come from these modules of the policy language.
_DATA_MODULES = frozenset(f"fumarole.policy_lang.{m}" for m in
                          ("ast", "types", "env", "checked", "diagnostics", "vectorize", "compiled"))
_CHECKED = "fumarole.policy_lang.checked"


def _checked_class() -> type[CheckedModule]:
    return import_module(_CHECKED).CheckedModule


class LazyModules(Mapping):
    """Checked modules made on first use: only checking or compiling more policies over a library
    (a bundle's, ``fumarole test --coverage``) needs them, and a run never does."""

    def __init__(self, load: Callable[[], Mapping[str, CheckedModule]]) -> None:
        self._load: Callable[[], Mapping[str, CheckedModule]] | None = load
        self._modules: dict[str, CheckedModule] = {}

    def _all(self) -> dict[str, CheckedModule]:
        if self._load is not None:
            self._modules, self._load = dict(self._load()), None
        return self._modules

    def __getitem__(self, name: str) -> CheckedModule:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


@dataclass(frozen=True)
class CachedLibrary:
    """What compiling a set of policy files produced, beyond the base library it was compiled over."""

    compiled: tuple[CompiledModule, ...]  # in the order the compiler produced them
    checked: Mapping[str, CheckedModule]  # the modules (kind ``module``) the files define
    warnings: tuple[Diagnostic, ...]


@dataclass(frozen=True)
class CheckedFiles:
    """What checking a set of policy files produced: each file's checked module (the files that
    parse, modules first) and every diagnostic."""

    checked: tuple[CheckedModule, ...]
    diagnostics: tuple[Diagnostic, ...]


# -- key ------------------------------------------------------------------------------------

def _fumarole_version() -> str:
    """The installed distribution's version, from its metadata folder's name on ``sys.path``
    (``fumarole-0.1.0.dist-info``): importing importlib.metadata would cost more than the rest
    of computing the key."""
    for entry in sys.path:
        try:
            names = sorted(n for n in os.listdir(entry or ".") if n.startswith("fumarole-") and n.endswith(".dist-info"))
        except OSError:
            continue
        if names:
            return names[0][len("fumarole-"):-len(".dist-info")]
    return "0+source"


@lru_cache(maxsize=4)
def toolchain_digest(inputs: tuple[Path, ...] = ()) -> str:
    """Everything besides the sources that decides the compiler's output: fumarole's and Python's
    versions, the files of the parser, checker and compiler, this module, and the ``inputs`` the
    caller's compiling reads (the schema and the hook catalogue): editing any of them invalidates
    every entry."""
    language = Path(sys.modules[CompiledModule.__module__].__file__ or "").parent
    files = sorted(p for p in language.iterdir() if p.suffix in (".py", ".lark"))
    h = hashlib.sha256()
    for part in (FORMAT, _fumarole_version().encode(), sys.implementation.cache_tag.encode(), sys.version.encode()):
        _hash_part(h, part)
    for path in [*files, Path(__file__), *inputs]:
        _hash_part(h, path.name.encode())
        _hash_part(h, path.read_bytes())
    return h.hexdigest()


def _hash_part(h: Any, part: bytes) -> None:
    """Add one part to a key, its length first: no text (a policy comment may hold any character,
    NUL included) can end one part and begin the next, so different inputs never share a key."""
    h.update(len(part).to_bytes(8, "big"))
    h.update(part)


def library_key(files: Iterable[tuple[str, str]], base_key: str = "", inputs: tuple[Path, ...] = ()) -> str | None:
    """The key of compiling these (name, text) files over the library of ``base_key``, reading
    ``inputs``; None (no caching) when the compiler's own files cannot be read."""
    try:
        toolchain = toolchain_digest(inputs)
    except OSError:
        return None
    h = hashlib.sha256()
    _hash_part(h, toolchain.encode())
    _hash_part(h, base_key.encode())
    for name, text in files:
        _hash_part(h, name.encode("utf-8", "surrogatepass"))
        _hash_part(h, text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


# -- writing --------------------------------------------------------------------------------

class _Unsupported(Exception):
    """Something the entry format cannot hold: the library is simply not cached."""


def _checked_state(c: CheckedModule) -> tuple[dict]:
    """A checked module as its fields: its side tables are keyed by the nodes' own ``nid`` fields,
    which the pickled tree keeps, so they need no re-keying."""
    return ({f.name: getattr(c, f.name) for f in dataclasses.fields(c)},)


def _code_bytes(code: types.CodeType) -> bytes:
    return marshal.dumps(code)


class _Writer(pickle.Pickler):
    """Pickles an entry: code objects as marshal bytes, checked modules as their fields."""

    def __init__(self, out: io.BytesIO) -> None:
        super().__init__(out, protocol=pickle.HIGHEST_PROTOCOL)
        self._checked = _checked_class()

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, types.CodeType):
            return _code_object, (_code_bytes(obj),)
        if isinstance(obj, self._checked):
            return _checked_module, _checked_state(obj)
        if callable(obj) and not isinstance(obj, type) and obj not in _READER_FUNCTIONS.values():
            raise _Unsupported  # a function or bound method: not plain data
        return NotImplemented


class _WriterOverBase(_Writer):
    """Also writes the base library's checked modules as references to them (``persistent_id`` is
    asked about every object, so only a library with a base pays for it)."""

    def __init__(self, out: io.BytesIO, base: Mapping[str, CheckedModule]) -> None:
        super().__init__(out)
        self._base = {id(module): name for name, module in base.items()}

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, self._checked) and id(obj) in self._base:
            return ("base", self._base[id(obj)])
        return None


def _dumps(value: Any, base: Mapping[str, CheckedModule]) -> bytes:
    out = io.BytesIO()
    (_WriterOverBase(out, base) if base else _Writer(out)).dump(value)
    return out.getvalue()


def _entry_bytes(key: str, library: CachedLibrary, base: Mapping[str, CheckedModule]) -> bytes:
    trees = [m.tree for m in library.compiled]
    if any(not isinstance(t, py.Module) for t in trees):
        raise _Unsupported
    compiled = tuple(dataclasses.replace(m, tree=None, tree_loader=None) for m in library.compiled)
    body = _dumps({"key": key, "compiled": compiled, "warnings": tuple(library.warnings),
                   "checked": _dumps(dict(library.checked), base),
                   "trees": pickle.dumps(trees, protocol=pickle.HIGHEST_PROTOCOL)}, {})
    return FORMAT + hashlib.sha256(body).digest() + body


def write_library(key: str, library: CachedLibrary, base: Mapping[str, CheckedModule] | None = None) -> None:
    """Store an entry (atomically: a temporary file renamed); any failure leaves the cache as it was."""
    _write_entry(key, lambda: _entry_bytes(key, library, base or {}))


def write_checked(key: str, checked: CheckedFiles) -> None:
    """Store what checking a set of policy files gave (``fumarole check`` of the standard library)."""
    def entry() -> bytes:
        body = _dumps({"key": key, "checked": _dumps(list(checked.checked), {}),
                       "diagnostics": tuple(checked.diagnostics)}, {})
        return CHECKED_FORMAT + hashlib.sha256(body).digest() + body
    _write_entry(key + CHECKED_MARK, entry)


def _write_entry(name: str, data_of: Callable[[], bytes]) -> None:
    folder = private_folder(create=True)
    if folder is None:
        return
    try:
        data = data_of()
    except (_Unsupported, pickle.PicklingError, TypeError, ValueError, RecursionError):
        return
    if write_private_file(folder, name + ENTRY_SUFFIX, data):
        _prune(folder)


def _prune(folder: Path) -> None:
    """Keep the newest entries (every edit of a policy or of the compiler makes a new one)."""
    entries = []
    for path in folder.glob("*" + ENTRY_SUFFIX):
        try:
            entries.append((path.stat().st_mtime, path))
        except OSError:
            continue
    for _, path in sorted(entries, reverse=True)[KEEP_ENTRIES:]:
        try:
            path.unlink()
        except OSError:
            pass


# -- reading --------------------------------------------------------------------------------

class _Rejected(Exception):
    """An entry that is not exactly what this module writes."""


def _code_object(data: bytes) -> types.CodeType:
    if not isinstance(data, bytes):
        raise _Rejected
    try:
        code = marshal.loads(data)
    except (EOFError, ValueError, TypeError) as exc:
        raise _Rejected from exc
    if not isinstance(code, types.CodeType):
        raise _Rejected
    return code


def _checked_module(fields: dict) -> CheckedModule:
    if not isinstance(fields, dict) or set(fields) != {f.name for f in dataclasses.fields(_checked_class())}:
        raise _Rejected
    return _checked_class()(**fields)


_READER_FUNCTIONS = {"_code_object": _code_object, "_checked_module": _checked_module}


class _Reader(pickle.Unpickler):
    """Admits only our data classes, Python syntax nodes and the two rebuilders above."""

    def __init__(self, data: bytes, base: Mapping[str, CheckedModule]) -> None:
        super().__init__(io.BytesIO(data))
        self._base = base

    def find_class(self, module: str, name: str) -> Any:
        if module == __name__ and name in _READER_FUNCTIONS:
            return _READER_FUNCTIONS[name]
        if module == "ast":
            found = getattr(py, name, None)
            if isinstance(found, type) and issubclass(found, py.AST):
                return found
        elif module in _DATA_MODULES and (module, name) != (_CHECKED, "CheckedModule"):  # only via the rebuilder
            found = getattr(import_module(module), name, None)
            if isinstance(found, type) and dataclasses.is_dataclass(found):
                return found
        raise _Rejected

    def persistent_load(self, pid: Any) -> Any:
        if isinstance(pid, tuple) and len(pid) == 2 and pid[0] == "base" and pid[1] in self._base:
            return self._base[pid[1]]
        raise _Rejected


def _loads(data: bytes, base: Mapping[str, CheckedModule]) -> Any:
    try:
        return _Reader(data, base).load()
    except _Rejected:
        raise
    except Exception as exc:  # noqa: BLE001 - any malformed pickle is a rejected entry, whatever it raises
        raise _Rejected from exc


def _tree_loader(data: bytes, count: int) -> Callable[[int], py.Module]:
    """Syntax trees decoded on first use (only readers of the generated source need them)."""
    decoded: list[py.Module] = []

    def tree(index: int) -> py.Module:
        if not decoded:
            trees = _loads(data, {})
            if not isinstance(trees, list) or len(trees) != count or \
                    not all(isinstance(t, py.Module) for t in trees):
                raise _Rejected
            decoded.extend(trees)
        return decoded[index]
    return tree


def _checked_modules(data: bytes, base: Mapping[str, CheckedModule],
                     recheck: Callable[[], Mapping[str, CheckedModule]]) -> Mapping[str, CheckedModule]:
    """The entry's checked modules; if they cannot be read after all, checked again (``recheck``)."""
    try:
        checked = _loads(data, base)
    except _Rejected:
        return recheck()
    kind = _checked_class()
    if not isinstance(checked, dict) or not all(isinstance(n, str) and isinstance(c, kind) for n, c in checked.items()):
        return recheck()
    return checked


def _library_of(payload: Any, key: str, base: Mapping[str, CheckedModule],
                recheck: Callable[[], Mapping[str, CheckedModule]]) -> CachedLibrary:
    """The entry's content once every part has the type it must have (the checked modules and the
    syntax trees, decoded on first use, are checked then)."""
    if not isinstance(payload, dict) or set(payload) != {"key", "compiled", "checked", "warnings", "trees"} \
            or payload["key"] != key or not isinstance(payload["trees"], bytes) \
            or not isinstance(payload["checked"], bytes):
        raise _Rejected
    compiled, warnings = payload["compiled"], payload["warnings"]
    if not isinstance(compiled, tuple) or not all(
            isinstance(m, CompiledModule) and isinstance(m.code, types.CodeType) and m.tree is None
            and m.tree_loader is None and m.code.co_filename == m.filename for m in compiled):
        raise _Rejected
    if not isinstance(warnings, tuple) or not all(isinstance(w, Diagnostic) for w in warnings):
        raise _Rejected
    trees = _tree_loader(payload["trees"], len(compiled))
    compiled = tuple(dataclasses.replace(m, tree_loader=lambda i=i: trees(i)) for i, m in enumerate(compiled))
    checked = payload["checked"]
    return CachedLibrary(compiled, LazyModules(lambda: _checked_modules(checked, base, recheck)), warnings)


def _entry_body(name: str, form: bytes) -> bytes | None:
    """An entry's body once its file is private, of the right format and intact."""
    folder = private_folder(create=False)
    if folder is None:
        return None
    data = read_private_file(folder / (name + ENTRY_SUFFIX))
    if data is None or not data.startswith(form):
        return None
    digest, body = data[len(form):len(form) + _DIGEST_SIZE], data[len(form) + _DIGEST_SIZE:]
    return body if hashlib.sha256(body).digest() == digest else None


def read_checked(key: str) -> CheckedFiles | None:
    """The checked files stored under ``key``, or None when there is no usable entry."""
    body = _entry_body(key + CHECKED_MARK, CHECKED_FORMAT)
    if body is None:
        return None
    try:
        payload = _loads(body, {})
        if not isinstance(payload, dict) or set(payload) != {"key", "checked", "diagnostics"} \
                or payload["key"] != key or not isinstance(payload["checked"], bytes):
            raise _Rejected
        checked, diagnostics = _loads(payload["checked"], {}), payload["diagnostics"]
    except _Rejected:
        return None
    kind = _checked_class()
    if not isinstance(checked, list) or not all(isinstance(c, kind) for c in checked) \
            or not isinstance(diagnostics, tuple) or not all(isinstance(d, Diagnostic) for d in diagnostics):
        return None
    return CheckedFiles(tuple(checked), diagnostics)


def read_library(key: str, base: Mapping[str, CheckedModule] | None = None,
                 recheck: Callable[[], Mapping[str, CheckedModule]] = dict) -> CachedLibrary | None:
    """The entry stored under ``key`` (compiled over ``base``), or None when there is no usable one.

    ``recheck`` gives the checked modules the usual way, should the entry's turn out unreadable
    when they are first needed (they are decoded then, not now).
    """
    body = _entry_body(key, FORMAT)
    if body is None:
        return None
    try:
        return _library_of(_loads(body, {}), key, base or {}, recheck)
    except _Rejected:
        return None
