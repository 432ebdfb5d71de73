"""The published JSON Schemas (``fumarole schema``): one self-contained document each.

In the repository the bundle schema refers to the hook catalogue's schema
(``hooks.schema.json#/$defs/combinator``).  An editor given only the printed
file could not follow that reference, so the printed schema carries a copy of
every definition it refers to in its own ``$defs``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from fumarole.runtime.bundles.schemas import SCHEMAS

PUBLISHED = {"bundle": "bundle.schema.json", "hooks": "hooks.schema.json"}


def published_schema(name: str) -> dict[str, Any]:
    """The named schema with every reference into another schema file inlined under ``$defs``."""
    schema = json.loads((SCHEMAS / PUBLISHED[name]).read_text())
    defs = schema.setdefault("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and not ref.startswith("#") and "#/" in ref:
                other, pointer = ref.split("#", 1)
                target: Any = json.loads((SCHEMAS / other).read_text())
                for part in pointer.strip("/").split("/"):
                    target = target[part]
                local = pointer.rstrip("/").rsplit("/", 1)[-1]
                if local not in defs:
                    defs[local] = inline(copy.deepcopy(target))
                return {**node, "$ref": f"#/$defs/{local}"}
            return {k: inline(v) for k, v in node.items()}
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    return inline(schema)
