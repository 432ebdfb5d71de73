"""A candidate bundle compiles first in a killable child: a compile that runs long or grows without
bound is refused there, and the service process never runs it (docs/input-safety.md, "Serve")."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from serving_helpers import GATE_POLICY, archive, make_service, namespaces, write_bundle

from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.policy_lang.parser import MAX_FILE_CHARS
import fumarole.runtime.serve.registry as registry_module


def _a_policy_of_a_mebibyte() -> str:
    """Valid, within the size caps, and seconds to parse: each line a definition."""
    lines = [GATE_POLICY, "\n"]
    size, i = len(GATE_POLICY) + 1, 0
    while True:
        line = f"def f{i}(x: int) -> int:\n    return x + {i} * (x - 1)\n\n"
        if size + len(line) >= MAX_FILE_CHARS:
            return "".join(lines)
        lines.append(line)
        size, i = size + len(line), i + 1


def test_a_compile_past_the_session_timeout_is_stopped_and_the_active_bundle_stays(tmp_path: Path):
    service = make_service(archive(write_bundle(tmp_path / "one", "1", namespaces())))
    active = service.registry.active
    service.session_timeout = 0.2  # killed after 1.2 s; the big policy takes seconds to parse
    slow = archive(write_bundle(tmp_path / "two", "2", namespaces(), policy=_a_policy_of_a_mebibyte()))
    started = time.monotonic()
    with pytest.raises(FumaroleError) as refused:
        service.registry.activate(slow, "upload")
    assert time.monotonic() - started < 30
    [diagnostic] = refused.value.diagnostics
    assert (diagnostic.code, diagnostic.file) == ("R001", "bundle compile")
    assert diagnostic.message == "the bundle compile ran past --session-timeout (0.2 s) and was stopped after 1.2 s"
    assert service.registry.active is active
    assert service.metrics.activation_failures.total() == 1
    assert service.registry.last_attempt["outcome"] == "rejected"


def test_a_compile_that_grows_without_bound_is_stopped_by_the_memory_budget(tmp_path: Path, monkeypatch):
    service = make_service(archive(write_bundle(tmp_path / "one", "1", namespaces())))
    active = service.registry.active
    monkeypatch.setattr(registry_module, "load_artifact", lambda *args: bytearray(8 << 30))
    with pytest.raises(FumaroleError) as refused:
        service.registry.activate(archive(write_bundle(tmp_path / "two", "2", namespaces())), "upload")
    [diagnostic] = refused.value.diagnostics
    assert diagnostic.code == "R001" and "the bundle compile ran out of its memory budget" in diagnostic.message
    assert service.registry.active is active


def test_a_bundle_that_does_not_compile_is_refused_with_its_own_diagnostics(tmp_path: Path):
    service = make_service(archive(write_bundle(tmp_path / "one", "1", namespaces())))
    broken = archive(write_bundle(tmp_path / "two", "2", namespaces(), policy=GATE_POLICY + "\nlet x = \n"))
    with pytest.raises(FumaroleError) as refused:
        service.registry.activate(broken, "upload.tar.gz")
    [diagnostic] = refused.value.diagnostics
    assert diagnostic.code == "P001" and diagnostic.file == "upload.tar.gz!/plugins/site.policy"
    assert (diagnostic.span.line, diagnostic.span.col) == (9, 9)


def test_a_good_bundle_compiles_in_the_child_then_in_the_service(tmp_path: Path, monkeypatch):
    service = make_service(archive(write_bundle(tmp_path / "one", "1", namespaces())))
    compiled_in = tmp_path / "compiled-in"
    real = registry_module.load_artifact

    def counted(*args):
        with compiled_in.open("a") as out:  # a file: the child's writes are seen here too
            out.write(f"{os.getpid()}\n")
        return real(*args)

    monkeypatch.setattr(registry_module, "load_artifact", counted)
    outcome, revision = service.registry.activate(archive(write_bundle(tmp_path / "two", "2", ["x"])), "upload")
    assert outcome == "activated" and revision.bundle.revision == "2"
    child, service_process = compiled_in.read_text().split()
    assert service_process == str(os.getpid()) and child != service_process
    assert not list(tmp_path.glob("**/fumarole-trial-*"))
