"""A cluster dump read from a live cluster: "my cluster now" in one command.

``fumarole snapshot`` and ``fumarole run --kubeconfig`` list the objects a
session reads -- nodes, pods, PriorityClasses, ResourceQuotas (with their
status: the resourcequota plugin reads ``status.hard`` and ``used``),
PodDisruptionBudgets (the pdb plugin), and Volcano's PodGroups, Queues,
HyperNodes and Numatopologies (the numa-aware plugin) -- and get the scheduler's ConfigMap, with read-only
verbs only (list, get).  Where that configuration names a metrics source, each Node gets the
usage averages the scheduler would read from it (runtime/ingest/node_metrics_source.py).  The objects come back exactly as ``kubectl get -o
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
from typing import Any, Callable
from urllib.parse import quote, urlencode

from fumarole.policy_lang import file_errors
from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.api.devices import atoi
from fumarole.runtime.api.extras import require_extra
from fumarole.runtime.ingest import node_metrics_source
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
    ("shard.volcano.sh/v1alpha1", "NodeShard", "nodeshards"),
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
    notes: tuple[str, ...] = ()  # why the metrics source gave less than asked (Volcano would log it)


class _Failure(Exception):
    """Why one request failed, said for the user."""


class _Api:
    """Requests to one server -- the API server with the kubeconfig's credentials, or a metrics
    source (``who`` names it in messages) -- under :class:`Limits`."""

    def __init__(self, host: str, pool: Any, limits: Limits, auth: Callable[[dict, str, str], None] | None = None,
                 who: str = "the API server") -> None:
        self.host = host.rstrip("/")
        self.pool = pool
        self.auth = auth
        self.limits = limits
        self.who = who
        self.read_bytes = 0

    @classmethod
    def of_client(cls, api_client: Any, limits: Limits) -> "_Api":
        def auth(headers: dict, path: str, method: str) -> None:
            api_client.update_params_for_auth(headers, [], ["BearerToken"], path, method, None)
        return cls(api_client.configuration.host, api_client.rest_client.pool_manager, limits, auth)

    def get(self, path: str, query: dict[str, Any] | None = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
        """The status and, for a 2xx, the JSON document of ``GET path``."""
        return self.request("GET", path, query, None, headers)

    def request(self, method: str, path: str, query: dict[str, Any] | None = None, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, Any]:
        """The status and, for a 2xx, the JSON document of ``method path`` (a search is a POST)."""
        import urllib3

        sent = {"Accept": "application/json", "User-Agent": "fumarole-snapshot", **(headers or {})}
        if self.auth is not None:
            self.auth(sent, path, method)
        url = self.host + path + (f"?{urlencode(query)}" if query else "")
        what = f"{method} {path}"
        try:
            response = self.pool.request(
                method, url, body=body, headers=sent, preload_content=False, redirect=False, retries=False,
                timeout=urllib3.Timeout(connect=self.limits.connect_seconds, read=self.limits.read_seconds))
        except urllib3.exceptions.ReadTimeoutError:
            raise self._silent(what) from None
        except urllib3.exceptions.HTTPError as exc:
            raise _Failure(f"cannot reach {self.who} {self.host}: {_reason(exc)}") from None
        try:
            if not 200 <= response.status < 300:
                return response.status, None
            return response.status, self._document(response, what)
        finally:
            response.release_conn()

    def _silent(self, what: str) -> _Failure:
        return _Failure(f"{self.who} sent nothing for {self.limits.read_seconds:g} s while answering {what}")

    def _document(self, response: Any, what: str) -> Any:
        import urllib3

        limit = min(self.limits.reply_bytes, self.limits.total_bytes - self.read_bytes)
        declared = response.headers.get("Content-Length", "")
        declared_size = atoi(declared)
        if declared_size is not None and declared_size > limit:
            raise _Failure(f"the reply to {what} is {declared_size:,} bytes, more than the {limit:,} "
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
                    raise _Failure(f"the reply to {what} is larger than the {limit:,} bytes fumarole reads")
                if time.monotonic() > deadline:
                    raise _Failure(f"the reply to {what} took longer than {self.limits.reply_seconds:g} s")
                chunks.append(chunk)
        except urllib3.exceptions.ReadTimeoutError:
            raise self._silent(what) from None
        except urllib3.exceptions.HTTPError as exc:
            raise _Failure(f"the reply to {what} broke off: {_reason(exc)}") from None
        self.read_bytes += size
        try:
            return strict_json(b"".join(chunks).decode("utf-8"), what)
        except UnicodeDecodeError as exc:
            raise _Failure(f"the reply to {what} is not UTF-8 JSON (byte {exc.start})") from None
        except FumaroleError as err:
            raise _Failure(f"the reply to {what} is not JSON fumarole reads: "
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
    api = _Api.of_client(api_client, limits or DEFAULT_LIMITS)
    try:
        items = [_as_dumped(item, api_version, kind, plural)
                 for api_version, kind, plural in KINDS for item in _list(api, api_version, plural)]
        conf = _scheduler_conf(api, configmap)
        notes = _node_metrics(api, conf, items)
    except _Failure as failure:
        raise _error(kubeconfig, str(failure)) from None
    finally:
        api_client.close()
    return Snapshot({"apiVersion": "v1", "kind": "List", "items": items}, conf, tuple(notes))


def _node_metrics(api: _Api, conf: str | None, items: list[dict]) -> list[str]:
    """Each Node's ``metrics`` block from the source the scheduler configuration names
    (runtime/ingest/node_metrics_source.py); the notes say what it did not give."""
    import urllib3

    settings = node_metrics_source.settings_of(conf)
    nodes = {item["metadata"].get("name"): item for item in items if item["kind"] == "Node"}
    names = [name for name in nodes if isinstance(name, str)]
    sources: dict[str, _Api] = {}
    verify = "CERT_NONE" if settings.get("tls.insecureSkipVerify") == "true" else "CERT_REQUIRED"

    def send(method: str, host: str | None, path: str, query: dict[str, Any] | None, body: bytes | None,
             headers: dict[str, str]) -> Any:
        if host is None:
            target = api
        else:
            target = sources.get(host) or sources.setdefault(host, _Api(
                host, urllib3.PoolManager(cert_reqs=verify), api.limits, who="the metrics source"))
        try:
            status, reply = target.request(method, path, query, body, headers)
        except _Failure as failure:
            raise node_metrics_source.Unavailable(str(failure)) from None
        if reply is None and status != 404:
            raise node_metrics_source.Unavailable(f"{target.who} answered {status} to {method} {path}")
        return reply

    reading = node_metrics_source.read(settings, names, send)
    for name, block in reading.blocks.items():
        nodes[name]["metrics"] = block
    return reading.notes


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
    return FumaroleError([file_errors.cluster_unreachable(kubeconfig, message)])
