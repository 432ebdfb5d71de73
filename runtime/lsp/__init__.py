"""``fumarole lsp``: a language server for policy files and bundle manifests.

``diagnostics`` runs exactly what ``fumarole check`` runs over an editor's
unsaved buffers (a bundle's files together); ``knowledge`` answers
completion, hover, definition and references from the checker's side tables
and the session schema; ``server`` speaks the Language Server Protocol over
stdio (pygls).
"""
