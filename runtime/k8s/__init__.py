"""The Kubernetes scheduler plugins Volcano wraps (``predicates``, ``nodeorder``).

Node affinity, taints and tolerations, host ports, pod (anti-)affinity,
topology spread, image locality and balanced allocation, restated from
kube-scheduler so policies can call them through the namespace.
"""
