"""The compiled-library cache: a hit gives exactly what compiling gives; a bad entry is never used."""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fumarole.policy_lang import parser, parser_tables
from fumarole.runtime.authoring.scenario import decisions_as_expect
from fumarole.runtime.bundles import compile_cache
from fumarole.runtime.bundles.bundle import build_bundle, load_bundle
from fumarole.runtime.bundles.library import Library, compile_sources, standard_library, standard_library_sources
from fumarole.runtime.cli.sessions import read_cluster
from fumarole.runtime.framework.lifecycle import new_session, run_session
from fumarole.runtime.ingest.scheduler_config import load_config

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("FUMAROLE_CACHE_DIR", str(folder))
    monkeypatch.delenv("FUMAROLE_NO_CACHE", raising=False)
    return folder


@pytest.fixture(scope="module")
def stdlib(tmp_path_factory) -> tuple[Library, Path]:
    """The standard library compiled once (a miss: what the compiler gives) and the entry it left."""
    folder = tmp_path_factory.mktemp("stdlib-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FUMAROLE_CACHE_DIR", str(folder))
        library = standard_library.__wrapped__()
    [entry] = _entries(folder)
    return library, entry


def _warm(cache: Path, entry: Path) -> None:
    cache.mkdir(mode=0o700, exist_ok=True)
    shutil.copy(entry, cache / entry.name)


# A small library (one plugin, no `use`) for the tests of bad entries: quick to compile.
_SMALL = ROOT / "examples/site-min-runtime/plugins/min_runtime.policy"


def _small_files() -> list[tuple[str, str]]:
    return [(str(_SMALL), _SMALL.read_text())]


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("*" + compile_cache.ENTRY_SUFFIX))


def _no_parsing(monkeypatch) -> None:
    """Fail the test if anything parses a policy (a cache hit must not)."""
    def refuse(*_args, **_kwargs):
        raise AssertionError("parsed although the cache holds the library")
    monkeypatch.setattr(parser, "parse", refuse)


def _decisions(library, cluster_file: str = "examples/two-queues/cluster.yaml",
               conf: str = "examples/two-queues/volcano-scheduler.conf") -> dict:
    config = load_config((ROOT / conf).read_text(), conf)
    cluster, _text = read_cluster(str(ROOT / cluster_file))
    return decisions_as_expect(run_session(new_session(build_bundle(config, library), cluster)))


def _same_library(a, b) -> None:
    assert list(a.plugins) == list(b.plugins) and list(a.actions) == list(b.actions)
    assert list(a.modules_by_filename) == list(b.modules_by_filename)
    for name, compiled in a.modules_by_filename.items():
        other = b.modules_by_filename[name]
        assert other.code == compiled.code  # the very code the compiler emitted
        assert other.source == compiled.source
        assert (other.line_map, other.file_map, other.hooks) == (compiled.line_map, compiled.file_map, compiled.hooks)
        # Syntax nodes compare by identity: compare what they hold.
        assert repr((other.args, other.arg_types, other.batch_fallbacks, other.process_states)) == \
            repr((compiled.args, compiled.arg_types, compiled.batch_fallbacks, compiled.process_states))
    assert a.warnings == b.warnings
    assert list(a.checked) == list(b.checked)
    for name, checked in a.checked.items():
        assert repr(b.checked[name].module) == repr(checked.module)
    assert a.sources == b.sources


def test_a_hit_is_what_compiling_gives(stdlib, cache, monkeypatch):
    compiled, entry = stdlib
    assert (entry.parent.stat().st_mode & 0o777) == 0o700 and (entry.stat().st_mode & 0o777) == 0o600
    _warm(cache, entry)
    _no_parsing(monkeypatch)
    warm = compile_sources(standard_library_sources(), cached=True)
    _same_library(compiled, warm)
    assert _decisions(warm) == _decisions(compiled)


def test_a_bundle_over_a_cached_stdlib_checks_and_compiles_the_same(stdlib, cache, monkeypatch):
    """A bundle's policies `use` stdlib modules: the cached checked modules serve the checker and
    the compiler exactly as freshly checked ones do; the bundle's own compilation is cached too."""
    compiled, entry = stdlib
    source = ROOT / "examples/site-most-overused-first/plugins/most_overused_first.policy"
    files = [(str(source), source.read_text())]
    fresh = compile_sources(files, compiled)
    _warm(cache, entry)
    warm_base = compile_sources(standard_library_sources(), cached=True)
    _same_library(fresh, compile_sources(files, warm_base, cached=True))
    _no_parsing(monkeypatch)
    _same_library(fresh, compile_sources(files, warm_base, cached=True))  # the bundle's own entry
    assert len(_entries(cache)) == 2


def test_a_bundle_folder_runs_the_same_from_the_cache(cache):
    folder = ROOT / "examples/site-min-runtime"
    cold, warm = load_bundle(folder), load_bundle(folder)
    assert len(_entries(cache)) >= 1
    cluster, _text = read_cluster(str(ROOT / "examples/two-queues/cluster.yaml"))
    runs = []
    for bundle in (cold, warm):
        runs.append(decisions_as_expect(run_session(new_session(bundle, cluster))))
    assert runs[0] == runs[1] and cold.digest == warm.digest


def _rewrites_a_bad_entry(cache: Path, spoil) -> None:
    good = compile_sources(_small_files(), cached=True)
    [entry] = _entries(cache)
    spoil(entry)
    again = compile_sources(_small_files(), cached=True)  # compiled again, no error
    _same_library(good, again)
    assert compile_cache.read_library(good.cache_key) is not None  # and rewritten whole


def test_a_corrupt_entry_is_ignored_and_rewritten(cache):
    def flip(entry: Path) -> None:
        data = bytearray(entry.read_bytes())
        data[len(data) // 2] ^= 0xFF
        entry.write_bytes(bytes(data))
    _rewrites_a_bad_entry(cache, flip)


def test_a_truncated_entry_is_ignored_and_rewritten(cache):
    _rewrites_a_bad_entry(cache, lambda entry: entry.write_bytes(entry.read_bytes()[:1000]))


def test_an_empty_or_foreign_format_entry_is_ignored(cache):
    _rewrites_a_bad_entry(cache, lambda entry: entry.write_bytes(b""))
    _rewrites_a_bad_entry(cache, lambda entry: entry.write_bytes(
        entry.read_bytes().replace(compile_cache.FORMAT, b"fumarole compiled library 0\n", 1)))


def test_an_entry_of_another_key_is_ignored(cache):
    """An entry copied under another key (another Python, another fumarole) is not used."""
    compile_sources(_small_files(), cached=True)
    [entry] = _entries(cache)
    other_key = hashlib.sha256(b"another python").hexdigest()
    (cache / (other_key + compile_cache.ENTRY_SUFFIX)).write_bytes(entry.read_bytes())
    assert compile_cache.read_library(other_key) is None


def _entry_with_body(body: bytes) -> bytes:
    return compile_cache.FORMAT + hashlib.sha256(body).digest() + body


def test_an_entry_holding_anything_but_our_data_is_refused_without_running_it(cache, tmp_path):
    """A well-formed entry (right digest, right key) that pickles a callable is refused: the
    unpickler admits only the policy language's data classes and syntax nodes."""
    marker = tmp_path / "ran"

    class Exploit:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))
    compile_sources(_small_files(), cached=True)
    [entry] = _entries(cache)
    key = entry.name[:-len(compile_cache.ENTRY_SUFFIX)]
    out = io.BytesIO()
    pickle.Pickler(out).dump({"key": key, "compiled": (Exploit(),), "checked": {}, "warnings": (), "trees": b""})
    entry.write_bytes(_entry_with_body(out.getvalue()))
    assert compile_cache.read_library(key) is None
    assert not marker.exists()
    out = io.BytesIO()
    pickle.Pickler(out).dump({"key": key, "compiled": ("not a module",), "checked": {}, "warnings": (),
                              "trees": b""})
    entry.write_bytes(_entry_with_body(out.getvalue()))
    assert compile_cache.read_library(key) is None  # plain data of the wrong type


def test_an_unwritable_cache_folder_runs_without_the_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("FUMAROLE_CACHE_DIR", str(blocker / "cache"))
    library = compile_sources(_small_files(), cached=True)
    assert library.plugins and not (blocker / "cache").exists()


def test_a_folder_others_can_write_is_not_used(cache):
    cache.mkdir(mode=0o700)
    compile_sources(_small_files(), cached=True)
    [entry] = _entries(cache)
    key = entry.name[:-len(compile_cache.ENTRY_SUFFIX)]
    os.chmod(cache, 0o777)
    assert compile_cache.read_library(key) is None
    os.chmod(cache, 0o700)
    os.chmod(entry, 0o666)
    assert compile_cache.read_library(key) is None  # nor an entry others can write
    os.chmod(entry, 0o600)
    link = cache / ("0" * 64 + compile_cache.ENTRY_SUFFIX)
    link.symlink_to(entry)
    assert compile_cache.read_library("0" * 64) is None  # nor a link
    assert compile_cache.read_library(key) is not None


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to give a file away")
def test_an_entry_owned_by_another_account_is_not_used(cache):
    compile_sources(_small_files(), cached=True)
    [entry] = _entries(cache)
    os.chown(entry, 65534, 65534)
    assert compile_cache.read_library(entry.name[:-len(compile_cache.ENTRY_SUFFIX)]) is None


def test_turned_off_it_neither_reads_nor_writes(cache, monkeypatch):
    monkeypatch.setenv("FUMAROLE_NO_CACHE", "1")
    compile_sources(_small_files(), cached=True)
    assert not cache.exists()


def test_edited_sources_and_compiler_files_change_the_key(tmp_path):
    files = standard_library_sources()
    key = compile_cache.library_key(files)
    name, text = files[0]
    assert compile_cache.library_key([(name, text + "\n# edited\n")] + files[1:]) != key
    assert compile_cache.library_key([(name + "x", text)] + files[1:]) != key
    assert compile_cache.library_key(files, base_key="another base") != key
    schema = tmp_path / "schema.yaml"
    schema.write_text("a: 1\n")
    before = compile_cache.library_key(files, inputs=(schema,))
    schema.write_text("a: 2\n")
    compile_cache.toolchain_digest.cache_clear()
    assert compile_cache.library_key(files, inputs=(schema,)) != before


def test_only_the_newest_entries_are_kept(cache, monkeypatch):
    monkeypatch.setattr(compile_cache, "KEEP_ENTRIES", 2)
    for i in range(4):
        compile_sources([(f"p{i}.policy", f"plugin p{i}\n")], cached=True)
    assert len(_entries(cache)) == 2
    assert compile_sources([("p3.policy", "plugin p3\n")], cached=True).plugins


def test_run_starts_warm_without_the_front_end(stdlib, cache):
    """`fumarole run` with a warm cache decides the same and imports neither the front end (Lark,
    the parser, checker and compiler) nor the tools other commands need."""
    _warm(cache, stdlib[1])  # a hit when this process's working folder is the repository's
    script = ("import sys\nfrom fumarole.runtime.cli.main import main\ncode = main(['run', 'examples/cluster.yaml'])\n"
              "heavy = ('lark', 'jsonschema', 'networkx', 'pygls', 'dask', 'matplotlib', 'plotly', 'kubernetes', 'starlette',\n"
              "         'fumarole.policy_lang.parser', 'fumarole.policy_lang.checker', 'fumarole.policy_lang.compiler')\n"
              "print(sorted(m for m in heavy if m in sys.modules), code, file=sys.stderr)\n")
    env = {**os.environ, "FUMAROLE_CACHE_DIR": str(cache)}
    runs = [subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=300) for _ in range(2)]
    assert runs[0].stdout == runs[1].stdout and runs[0].stdout
    assert runs[1].stderr.strip() == "[] 0"


def test_the_parse_tables_are_kept_in_the_private_folder_only(cache, tmp_path, monkeypatch):
    """Lark would keep (and unpickle) its tables in the shared temporary folder, where anyone can
    plant a file under the predictable name: fumarole gives it a file of its private folder."""
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))  # where Lark's default would put them
    parser._lark.__wrapped__().parse("plugin p\n")
    assert [p.name.startswith("lark-tables-") for p in cache.iterdir()] == [True]
    assert not list(tmp_path.glob(".lark*"))
    monkeypatch.setenv("FUMAROLE_NO_CACHE", "1")
    parser._lark.__wrapped__().parse("plugin p\n")
    assert not list(tmp_path.glob(".lark*"))


def test_archives_are_compiled_without_the_cache(cache):
    """An archive (an upload to `serve`, `--bundle X.tar.gz`) compiles in a fresh temporary folder
    and may come from anyone: it neither reads nor adds entries."""
    from fumarole.runtime.bundles.archive import folder_files, pack
    from fumarole.runtime.bundles.loader import load_artifact

    standard_library()  # the base (stored now unless this process compiled it earlier)
    stdlib_only = _entries(cache) if cache.exists() else []
    loaded = load_artifact(pack(folder_files(ROOT / "examples/site-min-runtime")), "site.tar.gz")
    assert "min_runtime" in loaded.bundle.plugins
    assert (_entries(cache) if cache.exists() else []) == stdlib_only


def test_checked_modules_unreadable_when_first_needed_are_checked_again(stdlib, cache):
    """The checked modules are decoded only when something needs them (a run never does); if they
    cannot be read then, the sources are checked again rather than anything failing."""
    compiled, entry = stdlib
    _warm(cache, entry)
    key = entry.name[:-len(compile_cache.ENTRY_SUFFIX)]
    body = entry.read_bytes()[len(compile_cache.FORMAT) + 32:]
    payload = compile_cache._loads(body, {})
    payload["checked"] = b"not a pickle"
    (cache / entry.name).write_bytes(_entry_with_body(compile_cache._dumps(payload, {})))
    warm = compile_sources(standard_library_sources(), cached=True)
    assert warm.cache_key == key and list(warm.checked) == list(compiled.checked)
    for name, checked in compiled.checked.items():
        assert repr(warm.checked[name].module) == repr(checked.module)


# -- checked files (`fumarole check` of the standard library) ---------------------------------------

def _check_report(path: str, monkeypatch) -> str:
    from fumarole.runtime.authoring import check

    check._stdlib_from.cache_clear()  # one check per process in real use: read the cache each time
    monkeypatch.chdir(ROOT)
    report = check.check_paths([ROOT / path])
    return repr([(d.code, d.file, d.span.line, d.span.col, d.message) for d in report.diagnostics]) + repr(report.files)


def test_check_reads_the_standard_library_checked_from_the_cache_and_reports_the_same(cache, monkeypatch):
    cold = _check_report("examples/site-eviction-budget", monkeypatch)
    [entry] = [e for e in _entries(cache) if e.name.endswith(compile_cache.CHECKED_MARK + compile_cache.ENTRY_SUFFIX)]
    _no_parsing_of(monkeypatch, "stdlib")
    assert _check_report("examples/site-eviction-budget", monkeypatch) == cold
    assert entry.exists()


def _no_parsing_of(monkeypatch, what: str) -> None:
    """Fail if a standard-library file is parsed (a hit on the checked-files entry must not)."""
    real = parser.parse

    def parse(text, file="<policy>", *args, **kwargs):
        if file.startswith("policies/volcano"):
            raise AssertionError(f"parsed {file} although the cache holds the checked {what}")
        return real(text, file, *args, **kwargs)
    monkeypatch.setattr(parser, "parse", parse)


def test_a_bad_checked_files_entry_is_ignored_and_rewritten(cache, monkeypatch):
    cold = _check_report("examples/site-eviction-budget", monkeypatch)
    [entry] = [e for e in _entries(cache) if e.name.endswith(compile_cache.CHECKED_MARK + compile_cache.ENTRY_SUFFIX)]
    good = entry.read_bytes()
    for damaged in (good[:1000], good.replace(compile_cache.CHECKED_FORMAT, compile_cache.FORMAT, 1),
                    compile_cache.CHECKED_FORMAT + hashlib.sha256(b"x").digest() + b"x"):
        entry.write_bytes(damaged)
        assert _check_report("examples/site-eviction-budget", monkeypatch) == cold
        assert entry.read_bytes() == good


def _tables_file(cache: Path) -> Path:
    [tables] = [p for p in cache.iterdir() if p.name.startswith("lark-tables-")]
    return tables


def test_the_parse_tables_are_read_back_without_unpickling(cache, monkeypatch):
    """A warm start reads the tables as JSON: nothing from the cache folder is ever unpickled,
    so no file there can run code when it is read."""
    parser_tables.build_parser(parser.PolicyIndenter())
    assert json.loads(_tables_file(cache).read_bytes())["data"]

    def no_unpickling(*args, **kwargs):
        raise AssertionError("the parse tables were unpickled")
    monkeypatch.setattr(pickle, "load", no_unpickling)
    monkeypatch.setattr(pickle, "loads", no_unpickling)
    monkeypatch.setattr(parser_tables, "Lark", _NotBuilt)  # a warm start must not build them either
    warm = parser_tables.build_parser(parser.PolicyIndenter())
    assert warm.parse("plugin p\n\nlet x = 1\n").data == "start"


class _NotBuilt:
    def __init__(self, *args, **kwargs):
        raise AssertionError("the parse tables were built although the cache held them")

    @staticmethod
    def _load_from_dict(data, memo, **kwargs):
        from lark import Lark
        return Lark._load_from_dict(data, memo, **kwargs)


@pytest.mark.parametrize("spoil", ["group-writable", "symlink", "garbage", "foreign-pattern"])
def test_a_tampered_parse_tables_file_is_never_used(cache, tmp_path, monkeypatch, spoil):
    """Tables in a file someone else could have written (group-writable, a link) are not read; a
    damaged file is rebuilt; either way the parser is the grammar's own."""
    parser_tables.build_parser(parser.PolicyIndenter())
    tables = _tables_file(cache)
    # The tampering: the keyword `plugin` no longer lexes, so a parser built from the file fails.
    spoiled = tables.read_bytes().replace(b"plugin|", b"pluXin|")
    assert spoiled != tables.read_bytes()
    if spoil == "group-writable":
        tables.write_bytes(spoiled)
        tables.chmod(0o660)
    elif spoil == "symlink":
        elsewhere = tmp_path / "elsewhere.json"
        elsewhere.write_bytes(spoiled)
        elsewhere.chmod(0o600)
        tables.unlink()
        tables.symlink_to(elsewhere)
    elif spoil == "garbage":
        tables.write_bytes(b'{"data": [1, 2], "memo": "\\u0000"')
    else:
        tables.write_bytes(spoiled)
        rebuilt = parser_tables.build_parser(parser.PolicyIndenter())  # a private file is trusted...
        with pytest.raises(Exception):
            rebuilt.parse("plugin p\n")  # ...which is why only private files are read
        return
    rebuilt = parser_tables.build_parser(parser.PolicyIndenter())
    assert rebuilt.parse("plugin p\n\nlet x = 1\n").data == "start"


def test_bundles_differing_around_a_nul_have_different_keys():
    """A policy comment may hold NUL: parts are length-prefixed, so moving text across a file
    boundary, or between a name and its text, always changes the key."""
    one = compile_cache.library_key([("a.policy", "# x\0b.policy\0y"), ])
    two = compile_cache.library_key([("a.policy", "# x"), ("b.policy", "y")])
    three = compile_cache.library_key([("a.policy\0# x", "")])
    four = compile_cache.library_key([("a.policy", "\0# x")])
    assert len({one, two, three, four}) == 4
    assert one == compile_cache.library_key([("a.policy", "# x\0b.policy\0y")])
    assert compile_cache.library_key([("a", "b")], base_key="k\0") != compile_cache.library_key([("a", "\0b")], "k")
