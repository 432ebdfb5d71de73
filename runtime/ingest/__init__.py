"""Cluster input: what a session is opened from.

Kubernetes objects from a ``kubectl get -o yaml`` dump turned into the
``api`` model (``kube``), YAML loaded with the position of every key and
scalar so errors name file:line:col (``yamlpos``), Volcano's scheduler
configuration (``scheduler_config``) and the queue hierarchy built from
``spec.parent`` (``queue_tree``).
"""
