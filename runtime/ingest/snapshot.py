"""A cluster dump read from a live cluster: "my cluster now" in one command.

``fumarole snapshot`` and ``fumarole run --kubeconfig`` list the objects a
session reads -- nodes, pods, PriorityClasses, ResourceQuotas (with their
status: the resourcequota plugin reads ``status.hard`` and ``used``),
PodDisruptionBudgets (the pdb plugin), and Volcano's PodGroups, Queues,
HyperNodes and Numatopologies (the numa-aware plugin) -- and get the scheduler's ConfigMap, with read-only
verbs only (list, get).  The objects come back exactly as ``kubectl get -o
yaml`` would print them (apiVersion and kind set on every item;
``managedFields`` dropped), so the dump is an ordinary cluster file: it can
be kept, edited, diffed and run again.

The official Kubernetes client reads the kubeconfig (contexts, certificates,
tokens, exec plugins, proxies); the requests themselves are made here, over
the client's own connection pool, because the API server at the other end is
not trusted to behave: every request has a connect and a read timeout and a
wall-clock limit for its whole reply, a reply is read in chunks up to a size
cap, lists are read in pages (``limit``/``continue``, as kubectl does), and
every reply's shape is checked before anything uses it.  A server that is
silent, endless, huge or malformed is one F005 naming the request and why
(exit 2), never a hang, an exhausted memory or an internal error.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from fumarole.policy_lang.diagnostics import NO_POSITION, Diagnostic, FumaroleError
from fumarole.runtime.api.extras import require_extra
from fumarole.runtime.ingest.strict_json import strict_json

# (apiVersion, kind, plural) of every kind a session reads; core kinds have no group.
KINDS = (
    ("v1", "Node", "nodes"),
    ("v1", "Pod", "pods"),
    ("scheduling.k8s.io/v1", "PriorityClass", "priorityclasses"),
    ("v1", "ResourceQuota", "resourcequotas"),
    ("policy/v1", "PodDisruptionBudget", "poddisruptionbudgets"),
    ("scheduling.volcano.sh/v1beta1", "Queue", "queues"),
    ("scheduling.volcano.sh/v1beta1", "PodGroup", "podgroups"),
    ("topology.volcano.sh/v1alpha1", "HyperNode", "hypernodes"),
    ("nodeinfo.volcano.sh/v1alpha1", "Numatopology", "numatopologies"),
)
DEFAULT_CONFIGMAP = "volcano-system/volcano-scheduler-configmap"
CONF_KEY = "volcano-scheduler.conf"
MiB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """How long and how much fumarole waits for and reads from an API server."""

    connect_seconds: float = 10.0  # to open the connection
    read_seconds: float = 30.0  # between two pieces of a reply (a silent server)
    reply_seconds: float = 120.0  # for one whole reply (a server trickling bytes)
    reply_bytes: int = 64 * MiB  # one reply (a page of a list)
    total_bytes: int = 1024 * MiB  # every reply of one snapshot together
    page_size: int = 500  # objects per page of a list, as kubectl asks
    max_pages: int = 100_000  # a server answering `continue` forever


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class Snapshot:
    """The objects, as one ``kind: List``, and the scheduler configuration if the ConfigMap has one."""

    objects: dict[str, Any]
    scheduler_conf: str | None


class _Failure(Exception):
    """Why one request failed, said for the user."""


class _Api:
    """GET requests to one API server with the kubeconfig's credentials, under :class:`Limits`."""

    def __init__(self, api_client: Any, limits: Limits) -> None:
        self.client = api_client
        self.host = api_client.configuration.host.rstrip("/")
        self.limits = limits
        self.read_bytes = 0

    def get(self, path: str, query: dict[str, Any] | None = None) -> tuple[int, Any]:
        """The status and, for a 2xx, the JSON document of ``GET path``."""
        import urllib3

        headers = {"Accept": "application/json", "User-Agent": "fumarole-snapshot"}
        self.client.update_params_for_auth(headers, [], ["BearerToken"], path, "GET", None)
        url = self.host + path + (f"?{urlencode(query)}" if query else "")
        try:
            response = self.client.rest_client.pool_manager.request(
                "GET", url, headers=headers, preload_content=False, redirect=False, retries=False,
                timeout=urllib3.Timeout(connect=self.limits.connect_seconds, read=self.limits.read_seconds))
        except urllib3.exceptions.ReadTimeoutError:
            raise self._silent(path) from None
        except urllib3.exceptions.HTTPError as exc:
            raise _Failure(f"cannot reach the API server {self.host}: {_reason(exc)}") from None
        try:
            if not 200 <= response.status < 300:
                return response.status, None
            return response.status, self._document(response, path)
        finally:
            response.release_conn()

    def _silent(self, path: str) -> _Failure:
        return _Failure(f"the API server sent nothing for {self.limits.read_seconds:g} s while answering GET {path}")

    def _document(self, response: Any, path: str) -> Any:
        import urllib3

        limit = min(self.limits.reply_bytes, self.limits.total_bytes - self.read_bytes)
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > limit:
            raise _Failure(f"the reply to GET {path} is {int(declared):,} bytes, more than the {limit:,} "
                           "fumarole reads")
        deadline = time.monotonic() + self.limits.reply_seconds
        chunks, size = [], 0
        try:
            while True:
                chunk = response.read1(1 << 16)  # what has arrived: read() would wait for 64 KiB
                if not chunk:
                    break
                size += len(chunk)
                if size > limit:
                    raise _Failure(f"the reply to GET {path} is larger than the {limit:,} bytes fumarole reads")
                if time.monotonic() > deadline:
                    raise _Failure(f"the reply to GET {path} took longer than {self.limits.reply_seconds:g} s")
                chunks.append(chunk)
        except urllib3.exceptions.ReadTimeoutError:
            raise self._silent(path) from None
        except urllib3.exceptions.HTTPError as exc:
            raise _Failure(f"the reply to GET {path} broke off: {_reason(exc)}") from None
        self.read_bytes += size
        try:
            return strict_json(b"".join(chunks).decode("utf-8"), f"GET {path}")
        except UnicodeDecodeError as exc:
            raise _Failure(f"the reply to GET {path} is not UTF-8 JSON (byte {exc.start})") from None
        except FumaroleError as err:
            raise _Failure(f"the reply to GET {path} is not JSON fumarole reads: "
                           f"{err.diagnostics[0].message}") from None


def _reason(exc: Exception) -> str:
    return str(getattr(exc, "reason", None) or exc)


def take(kubeconfig: str, context: str | None = None, configmap: str = DEFAULT_CONFIGMAP,
         limits: Limits | None = None) -> Snapshot:
    """Read the cluster ``kubeconfig`` (and ``context``) points at; FumaroleError (F005) when it cannot."""
    require_extra("kube", "reading a live cluster")
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    try:
        settings = client.Configuration()
        config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=settings)
        api_client = client.ApiClient(settings)
    except (ConfigException, OSError, ValueError, TypeError) as exc:
        raise _error(kubeconfig, f"cannot use the kubeconfig: {exc}") from None
    api = _Api(api_client, limits or DEFAULT_LIMITS)
    try:
        items = [_as_dumped(item, api_version, kind, plural)
                 for api_version, kind, plural in KINDS for item in _list(api, api_version, plural)]
        conf = _scheduler_conf(api, configmap)
    except _Failure as failure:
        raise _error(kubeconfig, str(failure)) from None
    finally:
        api_client.close()
    return Snapshot({"apiVersion": "v1", "kind": "List", "items": items}, conf)


def _list_path(api_version: str, plural: str) -> str:
    return f"/api/{api_version}/{plural}" if "/" not in api_version else f"/apis/{api_version}/{plural}"


def _list(api: _Api, api_version: str, plural: str) -> list[dict]:
    """Every object of one kind in all namespaces, page by page (an API group the server does not
    serve -- a Volcano CRD not installed, policy/v1 before Kubernetes 1.21 -- is no objects)."""
    path = _list_path(api_version, plural)
    items: list[dict] = []
    token = ""
    for _ in range(api.limits.max_pages):
        query = {"limit": api.limits.page_size, **({"continue": token} if token else {})}
        status, reply = api.get(path, query)
        if status == 404 and "/" in api_version and not token:
            return []  # the CRD is not installed (a cluster without HyperNodes)
        if reply is None:
            raise _Failure(f"the API server answered {status} to GET {path}")
        page, next_token = _page(reply, path)
        items += page
        if not next_token:
            return items
        if next_token == token:
            raise _Failure(f"the API server answered GET {path} with the same continue token twice")
        token = next_token
    raise _Failure(f"GET {path} did not end after {api.limits.max_pages:,} pages")


def _page(reply: Any, path: str) -> tuple[list[dict], str]:
    """A list reply's items and its continue token, after checking their shape."""
    if not isinstance(reply, dict):
        raise _Failure(f"the reply to GET {path} is not a JSON object but {_json_type(reply)}")
    items = reply.get("items")
    if items is None:
        items = []
    if not isinstance(items, list):
        raise _Failure(f"the reply to GET {path} has items that are {_json_type(items)}, not a list")
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise _Failure(f"the reply to GET {path} has items[{i}] that is {_json_type(item)}, not an object")
        if not isinstance(item.get("metadata"), dict):
            raise _Failure(f"the reply to GET {path} has items[{i}] without metadata (an object)")
    metadata = reply.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise _Failure(f"the reply to GET {path} has metadata that is {_json_type(metadata)}, not an object")
    token = (metadata or {}).get("continue") or ""
    if not isinstance(token, str):
        raise _Failure(f"the reply to GET {path} has a metadata.continue that is {_json_type(token)}, not a string")
    return items, token


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)


def _as_dumped(item: dict, api_version: str, kind: str, plural: str) -> dict:
    """An item of a list response as ``kubectl get -o yaml`` prints the object."""
    metadata = {k: v for k, v in item["metadata"].items() if k != "managedFields"}
    rest = {k: v for k, v in item.items() if k not in ("apiVersion", "kind", "metadata")}
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata, **rest}


def _scheduler_conf(api: _Api, configmap: str) -> str | None:
    namespace, _, name = configmap.partition("/")
    path = f"/api/v1/namespaces/{quote(namespace, safe='')}/configmaps/{quote(name, safe='')}"
    status, reply = api.get(path)
    if status in (403, 404):  # not there, or not ours to read: Volcano's defaults apply
        return None
    if reply is None:
        raise _Failure(f"the API server answered {status} to GET {path}")
    if not isinstance(reply, dict):
        raise _Failure(f"the reply to GET {path} is not a JSON object but {_json_type(reply)}")
    data = reply.get("data")
    if data is None:
        return None
    if not isinstance(data, dict):
        raise _Failure(f"the reply to GET {path} has data that is {_json_type(data)}, not an object")
    conf = data.get(CONF_KEY)
    if conf is not None and not isinstance(conf, str):
        raise _Failure(f"the reply to GET {path} has data.{CONF_KEY} that is {_json_type(conf)}, not a string")
    return conf


def _error(kubeconfig: str, message: str) -> FumaroleError:
    return FumaroleError([Diagnostic("F005", message, kubeconfig, NO_POSITION)])
