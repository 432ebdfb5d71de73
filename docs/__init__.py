"""fumarole's documentation, shipped with the package so the language server can quote it on hover."""
