"""Property-based fuzzing of cluster documents, session bodies and bundle archives (issue 8, section 7).

A small budget on every run (a few seconds); `python benchmarks/fuzz_inputs.py` runs the same
properties far longer (docs/robustness.md has its figures).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from fuzz_properties import (
    BYTE_EDIT,
    FILE_EDIT,
    MUTATION,
    TEXT_EDIT,
    archive_variants,
    as_json,
    as_yaml,
    check_archive,
    check_cluster_text,
    check_session_body,
    edited,
    mutated,
    site_files,
)
from hostile_inputs import BASE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

BUDGET = settings(max_examples=25, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@BUDGET
@given(st.lists(MUTATION, min_size=1, max_size=3))
def test_structure_mutations_of_a_cluster(mutations):
    check_cluster_text(as_yaml(mutated(mutations)).decode())


@BUDGET
@given(st.lists(TEXT_EDIT, min_size=1, max_size=4))
def test_text_mutations_of_a_cluster(edits):
    check_cluster_text(edited(as_yaml(BASE).decode(), edits))


@BUDGET
@given(st.lists(MUTATION, min_size=1, max_size=3), st.booleans())
def test_session_bodies(mutations, as_json_body):
    objects = mutated(mutations)
    if as_json_body:
        check_session_body(as_json(objects), "application/json")
    else:
        check_session_body(as_yaml(objects), "application/yaml")


@BUDGET
@given(st.lists(FILE_EDIT, max_size=3), st.lists(BYTE_EDIT, max_size=2))
def test_archives(file_edits, byte_edits):
    files = site_files(Path("."))
    files.update(dict(file_edits))
    with tempfile.TemporaryDirectory() as workdir:
        for data in archive_variants(files):
            for where, noise in byte_edits:
                at = int(where * len(data))
                data = data[:at] + noise + data[at + len(noise):]
            check_archive(data, Path(workdir))
