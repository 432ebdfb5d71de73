"""Kubernetes' ``imagelocality`` plugin: nodes that already hold a pod's images score
higher, scaled by how many nodes hold them."""

from __future__ import annotations

from typing import Mapping

from fumarole.runtime.api.model import Node, Task
from fumarole.runtime.k8s.podspec import cached_per_spec, list_at, mapping_at, MAX_NODE_SCORE, pod_spec


_IMAGE_MB = 1024 * 1024


_IMAGE_MIN_THRESHOLD = 23 * _IMAGE_MB


_IMAGE_MAX_CONTAINER_THRESHOLD = 1000 * _IMAGE_MB


ImageState = tuple[int, int]  # an image on a node: (size in bytes, nodes holding it), an ImageStateSummary


def cache_image_states(nodes: list[Node]) -> dict[str, dict[str, ImageState]]:
    """Node name -> image name -> state, as Volcano's scheduler cache records them.

    Volcano keeps one record per image name (cache/event_handlers.go addNodeImageStates): its size
    is the one listed where the name was first seen, and each node, as it is added, takes a
    summary of the record at that moment (the nodes holding the image so far, itself included;
    cache.go createImageStateSummary).  Nodes are added in the order given, so a node added
    earlier counts fewer holders than one added later, and sessions read those summaries as they
    are (framework/util.go GenerateNodeMapAndSlice), not kube-scheduler's cluster-wide counts.
    """
    sizes: dict[str, int] = {}
    holders: dict[str, int] = {}
    states: dict[str, dict[str, ImageState]] = {}
    for node in nodes:
        own: dict[str, ImageState] = {}
        for image in list_at(mapping_at(node.raw, "status"), "images"):
            for raw_name in list_at(image, "names"):
                name = str(raw_name)
                if name in own:
                    continue
                sizes.setdefault(name, int(image.get("sizeBytes") or 0))
                holders[name] = holders.get(name, 0) + 1
                own[name] = (sizes[name], holders[name])
        states[node.name] = own
    return states


def _normalized_image(name: str) -> str:
    """A pod image without a tag means ``:latest``, as in the node's image list."""
    return name if name.rfind(":") > name.rfind("/") else name + ":latest"


@cached_per_spec
def pod_images(task: Task) -> tuple[str, ...]:
    """The normalised image of every container, init containers first."""
    spec = pod_spec(task)
    return tuple(_normalized_image(str(c.get("image") or ""))
                 for c in list_at(spec, "initContainers") + list_at(spec, "containers"))


def image_locality_score(task: Task, images_on_node: Mapping[str, ImageState], total_nodes: int) -> int:
    """ImageLocality raw score in [0, 100] of a node holding ``images_on_node``.

    Each pod image already on the node counts its size scaled by the fraction of
    the session's ``total_nodes`` holding it (so an image present everywhere does
    not attract pods to one node); the sum is clamped to [23MB, 1000MB *
    containers] and mapped linearly to [0, 100].
    """
    images = pod_images(task)
    total = 0
    for name in images:
        if name in images_on_node:
            size, holders = images_on_node[name]
            total += int(size * (holders / total_nodes))
    max_threshold = _IMAGE_MAX_CONTAINER_THRESHOLD * len(images)
    if total < _IMAGE_MIN_THRESHOLD:
        total = _IMAGE_MIN_THRESHOLD
    elif total > max_threshold:
        total = max_threshold
    return MAX_NODE_SCORE * (total - _IMAGE_MIN_THRESHOLD) // (max_threshold - _IMAGE_MIN_THRESHOLD)
