"""Cluster input: what a session is opened from.

Kubernetes objects from a ``kubectl get -o yaml`` dump read as a cluster
(``kube``): each object's fields checked against their types (``kube_fields``),
converted into the ``api`` model (``kube_convert``), HyperNodes checked as a
tree (``hypernodes``); YAML loaded with the position of every key and
scalar so errors name file:line:col (``yamlpos``), Volcano's scheduler
configuration (``scheduler_config``) and the queue hierarchy built from
``spec.parent`` (``queue_tree``).
"""
