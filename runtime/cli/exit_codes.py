"""The exit codes every ``fumarole`` command shares.

0 the command ran and everything passed; 1 it ran and found failures (a
failing scenario, a diagnostic at or above ``--fail-on``); 2 it could not run
(bad input, bad policy, bad configuration).
"""

EXIT_OK, EXIT_FAILED, EXIT_ERROR = 0, 1, 2
