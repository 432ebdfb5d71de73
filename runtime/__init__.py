"""The session runtime the compiled policies run on, in stages.

Read it bottom up, the way Volcano's scheduler is laid out:

- ``api``: the objects a session reasons about (jobs, tasks, nodes, queues),
  resources, quantities and fit errors.
- ``ingest``: cluster input: Kubernetes objects from a ``kubectl`` dump, YAML
  with positions, the scheduler configuration and the queue tree.
- ``k8s``: the Kubernetes scheduler plugins Volcano wraps (filters, scores).
- ``framework``: one scheduling session: the session, the statement, how a
  hook combines its plugins' votes, the namespace compiled policies see.
- ``bundles``: policy bundles: manifests, compilation, archives, signatures.
- ``authoring``: what a policy author runs: check, scenarios, coverage,
  explanations, reports.
- ``serve``: the long-running service: HTTP, bundle registry, state folder,
  Volcano extender, metrics, decision log.
- ``cli``: the ``fumarole`` command.

Each stage imports only from the stages above it in this list; the engine
(``api`` to ``framework``) imports nothing from bundles, the service or the
command line.
"""
