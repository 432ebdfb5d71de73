"""Kubernetes' ``imagelocality`` plugin: nodes that already hold a pod's images score
higher, scaled by how many nodes hold them."""

from __future__ import annotations

from fumarole.runtime.api.model import Node, Task
from fumarole.runtime.k8s.podspec import cached_per_spec, list_at, mapping_at, MAX_NODE_SCORE, pod_spec


_IMAGE_MB = 1024 * 1024


_IMAGE_MIN_THRESHOLD = 23 * _IMAGE_MB


_IMAGE_MAX_CONTAINER_THRESHOLD = 1000 * _IMAGE_MB


def node_image_sizes(node: Node) -> dict[str, int]:
    """Image name -> size from node.status.images (every alias of an image has its size)."""
    sizes = {}
    for image in list_at(mapping_at(node.raw, "status"), "images"):
        for name in list_at(image, "names"):
            sizes[str(name)] = int(image.get("sizeBytes") or 0)
    return sizes


def _normalized_image(name: str) -> str:
    """A pod image without a tag means ``:latest``, as in the node's image list."""
    return name if name.rfind(":") > name.rfind("/") else name + ":latest"


@cached_per_spec
def pod_images(task: Task) -> tuple[str, ...]:
    """The normalised image of every container, init containers first."""
    spec = pod_spec(task)
    return tuple(_normalized_image(str(c.get("image") or ""))
                 for c in list_at(spec, "initContainers") + list_at(spec, "containers"))


def image_locality_score(task: Task, node: Node, total_nodes: int = 1,
                         nodes_with_image: dict[str, int] | None = None) -> int:
    """ImageLocality raw score in [0, 100].

    Each pod image already on the node counts its size scaled by the fraction of
    nodes holding it (so an image present everywhere does not attract pods to
    one node); the sum is clamped to [23MB, 1000MB * containers] and mapped
    linearly to [0, 100].  Without ``nodes_with_image`` an image counts as held
    by one node.
    """
    images = pod_images(task)
    sizes = node_image_sizes(node)
    total = 0
    for name in images:
        if name in sizes:
            holders = (nodes_with_image or {}).get(name, 1)
            total += int(sizes[name] * (holders / total_nodes))
    max_threshold = _IMAGE_MAX_CONTAINER_THRESHOLD * len(images)
    if total < _IMAGE_MIN_THRESHOLD:
        total = _IMAGE_MIN_THRESHOLD
    elif total > max_threshold:
        total = max_threshold
    return MAX_NODE_SCORE * (total - _IMAGE_MIN_THRESHOLD) // (max_threshold - _IMAGE_MIN_THRESHOLD)
