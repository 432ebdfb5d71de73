"""What every policy is checked against: the model schema and the hook catalogue.

``runtime/schema.yaml`` names the model's types and the standard library's
functions; ``policies/volcano/hooks.yaml`` names the session's hooks and how
each session function combines its plugins.  Together they are the language's
:class:`Environment`; the bundle layer builds it once per process and hands it
to the language driver, and the wiring reads the hook catalogue's dispatch
table.  Both files are package data, found the same way in a checkout, an
editable install and a wheel.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import yaml
from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.bundles.schemas import schema_diagnostics
from fumarole.runtime.ingest.yamlpos import load

if TYPE_CHECKING:
    from fumarole.policy_lang.env import Environment

STDLIB = Path(str(resources.files("fumarole.policies").joinpath("volcano")))
SCHEMA_FILE = Path(str(resources.files("fumarole.runtime").joinpath("schema.yaml")))
# Files besides the policy language's own that decide what compiling a policy gives.
COMPILER_INPUTS = (SCHEMA_FILE, STDLIB / "hooks.yaml")


@lru_cache(maxsize=1)
def load_environment() -> Environment:
    from fumarole.policy_lang.env import build_environment

    schema = yaml.load(SCHEMA_FILE.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    hooks_file = STDLIB / "hooks.yaml"
    hooks_doc = load(hooks_file.read_text())
    diags = schema_diagnostics(hooks_doc, "hooks.schema.json", str(hooks_file), "B001")
    if diags:
        raise FumaroleError(diags)
    return build_environment(schema, hooks_doc)


def hooks_document() -> dict:
    return load((STDLIB / "hooks.yaml").read_text())
