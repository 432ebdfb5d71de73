"""What-if: replay a workload trace on a virtual clock, measure it, report it, sweep it.

Between authoring and serve: a replay is a sequence of ordinary sessions
(``framework.session``) over a cluster that the trace and the sessions' own
decisions change; nothing here re-implements a session.
"""
