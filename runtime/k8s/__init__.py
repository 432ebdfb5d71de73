"""The Kubernetes scheduler plugins Volcano wraps (``predicates``, ``nodeorder``).

Restated from kube-scheduler so policies can call them through the namespace,
one module per upstream plugin (``pkg/scheduler/framework/plugins/<name>``):
nodeaffinity, tainttoleration, nodeunschedulable, nodeports, imagelocality,
noderesources (the non-zero requests and balanced allocation),
interpodaffinity and podtopologyspread.  podspec reads the pod spec they share;
view is the session-wide k8s view of every node's pods that the inter-pod
affinity and spread filters and scores need; domain_counts is the fast
engine's counts behind that view.
"""
