"""The generated reference stays in step with the schema."""

import yaml

from runtime.bundle import SCHEMA_FILE
from runtime.docgen import render


def test_stdlib_reference_is_up_to_date(root):
    expected = render(yaml.safe_load(SCHEMA_FILE.read_text()))
    assert (root / "docs/stdlib.md").read_text() == expected, "run: python -m runtime.docgen > docs/stdlib.md"
