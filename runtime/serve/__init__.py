"""``fumarole serve``: sessions over HTTP with hot-swapped bundles.

The HTTP application (``server``), the session service behind it
(``service``), the bundle registry with its swap lock and last-known-good
(``registry``, ``state``, ``watch``), Volcano's extender protocol
(``extender``, ``extender_codec``), Prometheus metrics (``metrics``) and the
decision log (``decision_log``).
"""
