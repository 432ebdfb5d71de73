"""The Language Server Protocol over stdio (pygls): fumarole's checker, schema and formatter in an editor.

Diagnostics are published on open and, debounced, on change.  Nothing that
parses or checks runs on the server's main thread: checks run one at a time in
a worker thread, and a newer edit of a document cancels its running check (the
checker stops at its next checkpoint, ``policy_lang/cancel.py``); completion,
hover, definition, references and formatting run in a second worker, so a long check
never holds up a request.  Every request answers what it can on a broken
buffer and never crashes the server.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types as T
from pygls.lsp.server import LanguageServer

from fumarole.policy_lang.cancel import Cancelled, run_cancellable
from fumarole.policy_lang.diagnostics import Diagnostic, FumaroleError
from fumarole.policy_lang.fmt import format_source
from fumarole.runtime.authoring.reporting import tool_version
from fumarole.runtime.bundles.manifest import MANIFEST
from fumarole.runtime.lsp import knowledge
from fumarole.runtime.lsp.diagnostics import diagnostics_by_file
from fumarole.runtime.lsp.protocol import AnsweringProtocol

DEBOUNCE_SECONDS = 0.3
log = logging.getLogger("fumarole.lsp")


def path_of(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path))


def _uri(path: Path) -> str:
    return path.resolve().as_uri()


def _range(d: Diagnostic) -> T.Range:
    if not d.positioned:
        return T.Range(T.Position(0, 0), T.Position(0, 0))
    return T.Range(T.Position(d.span.line - 1, d.span.col - 1), T.Position(d.span.end_line - 1, d.span.end_col - 1))


def to_lsp(d: Diagnostic) -> T.Diagnostic:
    severity = {"error": T.DiagnosticSeverity.Error, "warning": T.DiagnosticSeverity.Warning}.get(
        d.severity, T.DiagnosticSeverity.Information)
    message = d.message + (f"\nhint: {d.hint}" if d.hint else "")
    return T.Diagnostic(range=_range(d), message=message, severity=severity, code=d.code, source="fumarole")


def _place(place: knowledge.Place) -> T.Location:
    return T.Location(_uri(place.path), T.Range(T.Position(place.line, place.col),
                                                 T.Position(place.end_line, place.end_col)))


class FumaroleServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("fumarole", tool_version(), text_document_sync_kind=T.TextDocumentSyncKind.Full,
                         protocol_cls=AnsweringProtocol)
        self.strict = True
        self.pending: dict[str, asyncio.Task] = {}
        self.running: dict[str, threading.Event] = {}  # by document: how to cancel its running check
        self.published: dict[str, list[T.Diagnostic]] = {}  # by file: what the editor shows now
        self.checks = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fumarole-check")
        # Several query workers: a question about a large document never makes one about another wait.
        self.queries = ThreadPoolExecutor(max_workers=4, thread_name_prefix="fumarole-query")

    async def off_main_thread(self, work: Callable[..., Any], *args: Any) -> Any:
        """``work(*args)`` in the query worker (completion, hover, definition, references, formatting)."""
        return await asyncio.get_running_loop().run_in_executor(self.queries, work, *args)

    def buffers(self) -> dict[Path, str]:
        return {path_of(uri): doc.source for uri, doc in self.workspace.text_documents.items()}

    def text(self, uri: str) -> str:
        return self.workspace.get_text_document(uri).source

    def schedule_check(self, uri: str, delay: float) -> None:
        if not served(uri):
            return
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()
        running = self.running.pop(uri, None)
        if running is not None:
            running.set()  # the check of the older text stops at its next checkpoint
        self.pending[uri] = asyncio.ensure_future(self._check_later(uri, delay))

    async def _check_later(self, uri: str, delay: float) -> None:
        await asyncio.sleep(delay)
        path, buffers = path_of(uri), self.buffers()
        cancel = self.running[uri] = threading.Event()
        try:
            found = await asyncio.get_running_loop().run_in_executor(
                self.checks, run_cancellable, cancel, diagnostics_by_file, path, buffers, self.strict)
        except Cancelled:
            return  # superseded by a newer edit, which checks for itself
        except Exception:  # noqa: BLE001 - a failed check must not take the server down
            log.exception("check failed for %s", uri)
            return
        finally:
            if self.running.get(uri) is cancel:
                del self.running[uri]
        if self.pending.get(uri) is not asyncio.current_task() or cancel.is_set():
            return  # a newer edit has scheduled its own check
        del self.pending[uri]
        uris = {_uri(file): diags for file, diags in found.items()}
        for stale in set(self.published) - set(uris):
            if path_of(stale).parent == path.parent:
                uris.setdefault(stale, [])  # fixed since: clear what the editor still shows
        for target, diags in uris.items():
            shown = [to_lsp(d) for d in diags]
            self.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=target, diagnostics=shown))
            self.published[target] = shown


server = FumaroleServer()


@server.feature(T.INITIALIZED)
def initialized(ls: FumaroleServer, params: T.InitializedParams) -> None:
    return None


@server.feature(T.WORKSPACE_DID_CHANGE_CONFIGURATION)
def configuration(ls: FumaroleServer, params: T.DidChangeConfigurationParams) -> None:
    settings = params.settings.get("fumarole", {}) if isinstance(params.settings, dict) else {}
    ls.strict = bool(settings.get("strict", ls.strict))


@server.feature(T.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: FumaroleServer, params: T.DidOpenTextDocumentParams) -> None:
    ls.schedule_check(params.text_document.uri, 0)


@server.feature(T.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: FumaroleServer, params: T.DidChangeTextDocumentParams) -> None:
    ls.schedule_check(params.text_document.uri, DEBOUNCE_SECONDS)


@server.feature(T.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: FumaroleServer, params: T.DidSaveTextDocumentParams) -> None:
    ls.schedule_check(params.text_document.uri, 0)


def _is_manifest(uri: str) -> bool:
    return path_of(uri).name == MANIFEST


def served(uri: str) -> bool:
    """Policy files and bundle manifests; an editor may send other YAML files, which are not ours."""
    return _is_manifest(uri) or path_of(uri).suffix == ".policy"


@server.feature(T.TEXT_DOCUMENT_COMPLETION, T.CompletionOptions(trigger_characters=[".", " "]))
async def completion(ls: FumaroleServer, params: T.CompletionParams) -> T.CompletionList:
    uri, pos = params.text_document.uri, params.position
    if not served(uri):
        return T.CompletionList(is_incomplete=False, items=[])
    ask = knowledge.complete_manifest if _is_manifest(uri) else knowledge.complete_policy
    try:
        items = await ls.off_main_thread(ask, ls.text(uri), path_of(uri), pos.line, pos.character)
    except Exception:  # noqa: BLE001 - a half-typed file answers nothing rather than failing
        log.exception("completion failed")
        items = []
    kinds = {"attribute": T.CompletionItemKind.Field, "method": T.CompletionItemKind.Method,
             "hook": T.CompletionItemKind.Event, "plugin": T.CompletionItemKind.Module,
             "action": T.CompletionItemKind.Function, "module": T.CompletionItemKind.Module,
             "argument": T.CompletionItemKind.Property, "function": T.CompletionItemKind.Function,
             "variable": T.CompletionItemKind.Variable, "type": T.CompletionItemKind.Class}
    return T.CompletionList(is_incomplete=False, items=[
        T.CompletionItem(label=i.label, kind=kinds.get(i.kind), detail=i.detail or None,
                         documentation=T.MarkupContent(T.MarkupKind.Markdown, i.doc) if i.doc else None)
        for i in items])


@server.feature(T.TEXT_DOCUMENT_HOVER)
async def hover(ls: FumaroleServer, params: T.HoverParams) -> T.Hover | None:
    uri, pos = params.text_document.uri, params.position
    if not served(uri):
        return None
    parts = []
    try:
        if not _is_manifest(uri):
            about = await ls.off_main_thread(knowledge.hover_policy, ls.text(uri), path_of(uri), pos.line,
                                             pos.character)
            if about:
                parts.append(about)
    except Exception:  # noqa: BLE001
        log.exception("hover failed")
    parts += [knowledge.code_doc(code) for code in _codes_at(ls, uri, pos)]
    if not parts:
        return None
    return T.Hover(contents=T.MarkupContent(T.MarkupKind.Markdown, "\n\n---\n\n".join(parts)))


def _codes_at(ls: FumaroleServer, uri: str, pos: T.Position) -> list[str]:
    """Codes of the diagnostics published for this file whose range holds the position."""
    codes = []
    for d in ls.published.get(uri, []):
        start, end = d.range.start, d.range.end
        if (start.line, start.character) <= (pos.line, pos.character) <= (end.line, end.character):
            codes.append(str(d.code))
    return codes


@server.feature(T.TEXT_DOCUMENT_DEFINITION)
async def definition(ls: FumaroleServer, params: T.DefinitionParams) -> list[T.Location]:
    uri, pos = params.text_document.uri, params.position
    if not served(uri):
        return []
    find = knowledge.manifest_definition if _is_manifest(uri) else knowledge.definition
    try:
        return [_place(p) for p in await ls.off_main_thread(find, ls.text(uri), path_of(uri), pos.line,
                                                            pos.character)]
    except Exception:  # noqa: BLE001
        log.exception("definition failed")
        return []


@server.feature(T.TEXT_DOCUMENT_REFERENCES)
async def references(ls: FumaroleServer, params: T.ReferenceParams) -> list[T.Location]:
    uri, pos = params.text_document.uri, params.position
    found = await ls.off_main_thread(knowledge.references, ls.text(uri), path_of(uri), pos.line, pos.character)
    return [_place(p) for p in found]


@server.feature(T.TEXT_DOCUMENT_FORMATTING)
async def formatting(ls: FumaroleServer, params: T.DocumentFormattingParams) -> list[T.TextEdit] | None:
    uri = params.text_document.uri
    if _is_manifest(uri):
        return None
    text = ls.text(uri)
    try:
        formatted = await ls.off_main_thread(format_source, text, str(path_of(uri)))
    except FumaroleError as err:
        ls.window_show_message(T.ShowMessageParams(
            T.MessageType.Error, f"fumarole: not formatted, the file does not parse: {err.diagnostics[0].headline()}"))
        return None
    if formatted == text:
        return []
    lines = text.splitlines()
    end = T.Position(len(lines), 0)
    return [T.TextEdit(T.Range(T.Position(0, 0), end), formatted)]


def main() -> None:
    server.start_io()
