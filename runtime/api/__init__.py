"""The objects a session reasons about, as in Volcano's ``scheduler/api``.

Jobs, tasks, nodes and queues (``model``), resource vectors and their
comparisons (``resource``), Kubernetes quantities (``quantity``) and the fit
errors a predicate reports (``fit``).  Nothing here knows about policies.
"""
