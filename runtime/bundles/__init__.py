"""Policy bundles: what a site ships.

A manifest (``bundle.yaml``) or a ``volcano-scheduler.conf`` is validated,
its policies checked and compiled, its arguments converted and its tiers
wired (``bundle``); bundles travel as reproducible archives (``archive``),
signed with ed25519 (``signing``) and loaded with every check applied
(``loader``).
"""
