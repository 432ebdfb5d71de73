"""The JSON Schemas of bundle manifests and the hook catalogue, reported at YAML positions.

``bundle.yaml`` and ``hooks.yaml`` are checked against their schemas
(``runtime/schemas/``) before anything reads them; a violation is a diagnostic
at the line and column of the offending key, so this is kept apart from what
the documents mean.  ``jsonschema`` is imported only when a document is
validated: a run over a cached library never needs it.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fumarole.policy_lang.diagnostics import Diagnostic, Span, did_you_mean
from fumarole.runtime.bundles import bundle_errors
from fumarole.runtime.ingest.yamlpos import key_position, walk_path

if TYPE_CHECKING:
    import jsonschema

# Package data, found the same way in a checkout, an editable install and a wheel.
SCHEMAS = Path(str(resources.files("fumarole.runtime").joinpath("schemas")))


def _json_schema(name: str) -> dict:
    return json.loads((SCHEMAS / name).read_text())


def _validator(name: str) -> jsonschema.protocols.Validator:
    import jsonschema  # only when validating: a run over a cached library never needs it
    from referencing import Registry, Resource

    registry = Registry().with_resources(
        (schema["$id"].rsplit("/", 1)[-1], Resource.from_contents(schema))
        for schema in (_json_schema("hooks.schema.json"), _json_schema("bundle.schema.json")))
    schema = _json_schema(name)
    return jsonschema.Draft202012Validator(schema, registry=registry)


def schema_diagnostics(doc: Any, schema_name: str, file: str, code: str) -> list[Diagnostic]:
    """Every JSON Schema violation of a YAML document, at the YAML line and column of the offending key."""
    out = []
    for err in sorted(_validator(schema_name).iter_errors(doc), key=lambda e: list(map(str, e.absolute_path))):
        line, col = walk_path(doc, iter(err.absolute_path))
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        message = err.message
        if err.validator == "additionalProperties":
            extra = [k for k in (err.instance or {}) if k not in (err.schema.get("properties") or {})]
            if extra and isinstance(err.instance, dict):
                line, col = key_position(err.instance, extra[0])
                known = list((err.schema.get("properties") or {}).keys())
                out.append(bundle_errors.schema_unknown_key(code, file, Span(line, col), extra[0], where,
                                                            did_you_mean(extra[0], known)))
                continue
        hint = did_you_mean(err.instance, map(str, err.validator_value)) \
            if err.validator == "enum" and isinstance(err.instance, str) else None
        out.append(bundle_errors.schema_violation(code, file, Span(line, col), where, message, hint))
    return out
