"""Policy bundles: what a site ships.

A manifest (``bundle.yaml``, read by ``manifest`` against the JSON Schemas of
``schemas``) or a ``volcano-scheduler.conf`` is validated, its policies checked
and compiled by the language driver over the model schema and hook catalogue
(``library``, ``environment``; kept on disk by ``compile_cache``), its
arguments converted (``arguments``) and its tiers wired (``bundle``); bundles
travel as reproducible archives (``archive``), signed with ed25519
(``signing``) and loaded with every check applied (``loader``).
"""
