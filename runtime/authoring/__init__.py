"""What a policy author runs before a bundle ships.

``check`` (every diagnostic of every file), scenario files with expected
decisions (``scenario``), rule coverage (``probes``, ``coverage``), failure
explanations (``explain``), report formats (``reporting``) and the generated
reference docs and published schemas (``docgen``, ``schema_export``).
"""
