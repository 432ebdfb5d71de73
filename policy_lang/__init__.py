"""The policy language: syntax, check, compile.

``parser`` (Lark grammar to ``ast`` nodes with spans), ``env`` and ``types``
(what the host declares), ``checker`` (names and types), ``compiler`` (Python
code objects), ``lint``, ``fmt`` and ``diagnostics``.  It imports nothing
from the runtime.
"""
