"""One scheduling session, as in Volcano's ``scheduler/framework``.

The session (``session``) holds the snapshot and runs the actions; a
statement (``statement``) records evictions, pipelines and allocations and
commits or discards them; ``dispatch`` is how a hook combines its plugins'
votes across tiers; ``namespace`` is everything a compiled policy can call;
``priority_queue`` is Volcano's Go heap; ``predicate_helper`` is its node
sampling; ``go_semantics`` restates the Go library functions whose exact
behaviour decisions depend on (time parsing, rounding).
"""
