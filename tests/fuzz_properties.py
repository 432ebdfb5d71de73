"""The fuzzers' strategies and invariants for the three input front doors that are not policy
text: cluster documents, session bodies, and bundle archives.

The invariant is the same everywhere: a clean result or diagnostics with a code (and, for
YAML, a position), in bounded time -- never another exception (a crash, or a 500 in serve).
``tests/test_fuzz_inputs.py`` runs each property with a small budget on every ``pytest``;
``benchmarks/fuzz_inputs.py`` runs them for as long as asked and prints what it found.
"""

from __future__ import annotations

import io
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.bundles.archive import pack
from fumarole.runtime.bundles.bundle import default_bundle
from fumarole.runtime.bundles.loader import load_artifact
from fumarole.runtime.framework.lifecycle import new_session, run_session
from fumarole.runtime.ingest.kube import load_cluster
from fumarole.runtime.serve.service import parse_cluster
from hypothesis import strategies as st
from hostile_inputs import ALL_PATHS, BASE, HOSTILE_VALUES, as_json, as_yaml, removed, replaced

SECONDS = 60  # a hang guard: the hangs fixed here took minutes; speed is measured in benchmarks/

# -- cluster documents: structure mutations --------------------------------------------------

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
                     st.floats(allow_nan=False), st.text(max_size=12),
                     st.from_regex(r"[+-]?[0-9]{0,6}(\.[0-9]{0,4})?([eE][+-]?[0-9]{1,12}|Ki|Mi|m|k|G)?", fullmatch=True))
VALUES = st.one_of(st.sampled_from(HOSTILE_VALUES),
                   st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                                  st.dictionaries(st.text(max_size=6), inner,
                                                                                  max_size=3)),
                                max_leaves=6))
MUTATION = st.tuples(st.sampled_from(ALL_PATHS), st.one_of(VALUES, st.just(removed)))


def mutated(mutations: list[tuple[tuple, Any]]) -> list:
    """BASE with each (path, value) applied in turn; paths a previous change removed are skipped."""
    objects = BASE
    for path, value in mutations:
        try:
            objects = removed(objects, path) if value is removed else replaced(objects, path, value)
        except (KeyError, IndexError, TypeError):
            continue
    return objects


# -- cluster documents: scalar / text mutations of the YAML ---------------------------------------

_YAML_NOISE = st.sampled_from(list("[]{}:-,&*!|>'\"#%@`?\n\t ") + ["\x00", "\ufeff", "é", "١", "- ", ": ", "*a",
                                                                       "&a ", "!!binary ", "<<: ", "1e999999999"])
TEXT_EDIT = st.tuples(st.floats(min_value=0, max_value=1), st.integers(min_value=0, max_value=3),
                      st.lists(_YAML_NOISE, max_size=4).map("".join))


def edited(text: str, edits: list[tuple[float, int, str]]) -> str:
    """``text`` with each (where, how many characters removed, what inserted) applied."""
    for where, cut, insert in edits:
        at = int(where * len(text))
        text = text[:at] + insert + text[at + cut:]
    return text


# -- the invariants --------------------------------------------------------------------------------

def _positioned(err: FumaroleError) -> None:
    assert err.diagnostics, "an error without a diagnostic"
    for diagnostic in err.diagnostics:
        assert diagnostic.code[0] in "KF", diagnostic.headline()
        assert diagnostic.span.line >= 1 and diagnostic.span.col >= 1, diagnostic.headline()


def _session(cluster: Any, started: float, source: str, text: str | None = None) -> str:
    """One default session on ``cluster`` run as the front doors run it (the lifecycle's run, its
    problems placed at ``source`` as warnings), within the time bound counted from ``started``."""
    session = new_session(default_bundle(), cluster)
    run_session(session, source, {source: text} if text is not None else None)
    assert all(d.code == "K110" and d.severity == "warning" and d.file == source for d in session.warnings), \
        [d.headline() for d in session.warnings]
    assert time.perf_counter() - started < SECONDS, "too slow"
    return "ok"


def check_cluster_text(text: str) -> str:
    """The cluster loads and a default session runs on it, or a positioned K/F diagnostic says why."""
    started = time.perf_counter()
    try:
        cluster = load_cluster(text, "fuzz.yaml")
    except FumaroleError as err:
        _positioned(err)
        return err.diagnostics[0].code
    return _session(cluster, started, "fuzz.yaml", text)


def check_session_body(body: bytes, content_type: str) -> str:
    """What serve does with a body before and during a session: 200 or 400, never another error."""
    started = time.perf_counter()
    try:
        cluster = parse_cluster(body, content_type)
    except FumaroleError as err:
        assert err.diagnostics and err.diagnostics[0].code.startswith("K"), err.diagnostics
        return err.diagnostics[0].code
    return _session(cluster, started, "request")


# -- archives ----------------------------------------------------------------------------------------

_NAMES = st.sampled_from(["bundle.yaml", "plugins/site.policy", "plugins/site.policy/inner", "bundle.yaml/x",
                          "../escape.policy", "/abs.policy", "a/../../b", "plugins/ü.policy", "", ".", "plugins/",
                          "plugins//x.policy", ".fumarole/manifest.json", "x" * 300, "plugins/a.policy"])
_CONTENTS = st.one_of(st.sampled_from([b"", b"\xff\xfe\x00", b"plugin x\n", b"[" * 50_000, b"a: &a [*a]",
                                       b"sources: ['../../etc/*']", b"sources: 5", b"kind: PolicyBundle\n" * 3]),
                      st.binary(max_size=40))
FILE_EDIT = st.tuples(_NAMES, _CONTENTS)
BYTE_EDIT = st.tuples(st.floats(min_value=0, max_value=1), st.binary(min_size=1, max_size=3))


def site_files() -> dict[str, bytes]:
    manifest = (b"apiVersion: fumarole/v1\nkind: PolicyBundle\nmetadata: {name: site, revision: '1'}\n"
                b"uses: [volcano]\nsources: ['plugins/*.policy']\n")
    return {"bundle.yaml": manifest, "plugins/site.policy": b"plugin site\n\non open:\n    pass\n"}


def raw_tar(members: dict[str, bytes]) -> bytes:
    """A gzipped tar written member by member, whatever the names (pack() would refuse some)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def archive_variants(files: dict[str, bytes]) -> list[bytes]:
    """The file set packed properly (valid digests: the loader must judge the content) and raw."""
    out = [raw_tar(files)]
    try:
        out.append(pack(files))
    except (FumaroleError, ValueError):
        pass
    return out


def check_archive(data: bytes, workdir: Path) -> str:
    """An archive is a bundle or A/B/E/... diagnostics, never another exception, and leaves no folder."""
    started = time.perf_counter()
    try:
        load_artifact(data, "fuzz.tar.gz", workdir=workdir)
        outcome = "ok"
    except FumaroleError as err:
        assert err.diagnostics, "an error without a diagnostic"
        outcome = err.diagnostics[0].code
    assert list(workdir.iterdir()) == [], "a compile folder was left behind"
    assert time.perf_counter() - started < SECONDS, "too slow"
    return outcome


# -- the properties, as the tests and the long-run script call them ---------------------------------

def structure(mutations: list) -> str:
    return check_cluster_text(as_yaml(mutated(mutations)).decode())


def text_edits(edits: list) -> str:
    return check_cluster_text(edited(as_yaml(BASE).decode(), edits))


def body(mutations: list, json_body: bool) -> str:
    objects = mutated(mutations)
    if json_body:
        return check_session_body(as_json(objects), "application/json")
    return check_session_body(as_yaml(objects), "application/yaml")


def archive(file_edits: list, byte_edits: list) -> str:
    files = site_files()
    files.update(dict(file_edits))
    outcome = "ok"
    with tempfile.TemporaryDirectory() as workdir:
        for data in archive_variants(files):
            for where, noise in byte_edits:
                at = int(where * len(data))
                data = data[:at] + noise + data[at + len(noise):]
            outcome = check_archive(data, Path(workdir))
    return outcome


# name -> (property, strategies of its arguments)
PROPERTIES: dict[str, tuple[Callable[..., str], tuple]] = {
    "cluster documents, structure": (structure, (st.lists(MUTATION, min_size=1, max_size=3),)),
    "cluster documents, text": (text_edits, (st.lists(TEXT_EDIT, min_size=1, max_size=4),)),
    "session bodies (YAML / JSON)": (body, (st.lists(MUTATION, min_size=1, max_size=3), st.booleans())),
    "bundle archives": (archive, (st.lists(FILE_EDIT, max_size=3), st.lists(BYTE_EDIT, max_size=2))),
}
