"""The generated reference stays in step with the schema."""

import yaml
from fumarole.runtime.authoring.docgen import render
from fumarole.runtime.bundles.environment import SCHEMA_FILE


def test_stdlib_reference_is_up_to_date(root):
    expected = render(yaml.safe_load(SCHEMA_FILE.read_text()))
    assert (root / "docs/stdlib.md").read_text() == expected, "run: python -m fumarole.runtime.authoring.docgen > docs/stdlib.md"
