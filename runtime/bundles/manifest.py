"""A bundle's manifest (``bundle.yaml``): read, checked against its schema, and taken apart.

The manifest names the bundle, the policy files it adds (``sources`` globs),
the wiring in the shape of a ``volcano-scheduler.conf`` (``actions``, ``tiers``,
``configurations``), the session functions' combinators (``hooks``) and the
scheduler's options.  This module reads each part at its positions; wiring the
parts into a Bundle is ``bundle.py``'s job, and ``fumarole check`` reads the
same parts to report every problem at once.
"""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Any

from fumarole.policy_lang.diagnostics import Diagnostic, FumaroleError, Span
from fumarole.runtime.bundles import bundle_errors
from fumarole.runtime.bundles.schemas import schema_diagnostics
from fumarole.runtime.ingest.scheduler_options import (
    DEFAULT_OPTIONS,
    SchedulerOptions,
    read_options_block,
    with_overrides,
)
from fumarole.runtime.ingest.source import display_path, read_text
from fumarole.runtime.ingest.yamlpos import PosDict, YamlError, load, walk_path

MANIFEST = "bundle.yaml"


def read_manifest(manifest_path: Path) -> tuple[Any, str, str]:
    """A manifest's document, its name as messages show it and its text; raises FumaroleError
    (B000 for YAML that does not parse, B001 for every violation of the schema)."""
    file = display_path(manifest_path)
    text = read_text(manifest_path)
    try:
        doc = load(text)
    except YamlError as exc:
        raise FumaroleError([bundle_errors.malformed_manifest(file, Span(exc.line, exc.col), exc.message)],
                            {file: text}) from None
    diags = schema_diagnostics(doc, "bundle.schema.json", file, "B001") if isinstance(doc, dict) else \
        [bundle_errors.manifest_not_a_mapping(file)]
    if diags:
        raise FumaroleError(diags, {file: text})
    return doc, file, text


def manifest_sources(doc: Any, folder: Path, file: str) -> tuple[list[tuple[str, str]], list[Diagnostic]]:
    """The policy files (display name, text) a manifest's `sources` globs name; B002 for a glob matching none."""
    files: list[tuple[str, str]] = []
    diags: list[Diagnostic] = []
    for pattern in doc.get("sources") or []:
        matches = sorted(glob.glob(str(folder / pattern), recursive=True))
        if not matches:
            line, col = walk_path(doc, iter(["sources", doc["sources"].index(pattern)]))
            diags.append(bundle_errors.source_matches_nothing(file, Span(line, col), pattern))
        for match in matches:
            files.append((display_path(Path(match)), read_text(Path(match))))
    return files, diags


def manifest_scheduler_options(doc: Any, file: str) -> tuple[SchedulerOptions, list[Diagnostic]]:
    """The manifest's ``schedulerOptions`` over Volcano's defaults (the schema checked the types)."""
    if "schedulerOptions" not in doc:
        return DEFAULT_OPTIONS, []
    overrides, diags = read_options_block(doc["schedulerOptions"], file)
    return with_overrides(DEFAULT_OPTIONS, overrides), diags


def manifest_config_document(doc: Any) -> Any:
    """A manifest's wiring in the shape of a volcano-scheduler.conf, at the manifest's positions."""
    conf_doc = {"actions": doc.get("actions", "")}
    if isinstance(conf_doc["actions"], list):
        # Items that are not names were reported by the schema check; leave them out here.
        conf_doc["actions"] = ", ".join(a for a in conf_doc["actions"] if isinstance(a, str))
    conf_doc["tiers"] = doc.get("tiers") or []
    conf_doc["configurations"] = doc.get("configurations") or []
    return _with_positions(doc, conf_doc)


def _with_positions(doc: Any, conf: dict) -> Any:
    """Give the derived configuration document the manifest's positions."""
    out = PosDict(conf)
    out.pos = doc.pos
    out.key_pos = {k: doc.key_pos.get(k, doc.pos) for k in conf}
    out.value_pos = {k: doc.value_pos.get(k, doc.pos) for k in conf}
    return out
