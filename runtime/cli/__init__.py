"""The ``fumarole`` command: argument parsing, output and exit codes.

``main`` is the entry point and ``run``; ``authoring_commands`` adds check,
fmt and schema; ``test_command`` runs scenarios; ``serve_commands`` adds the
bundle commands and serve; ``output`` renders tables; ``exit_codes`` is the
one table of exit codes.
"""
