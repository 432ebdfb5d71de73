"""Input files and request bodies as text: UTF-8, or one F001 diagnostic saying where it is not.

Every YAML input (cluster dumps, scenarios, configurations) is UTF-8, as
Kubernetes writes it; a UTF-16 export or a binary file given by mistake must
be a clear error at its first bad byte, whichever command reads it.
"""

from __future__ import annotations

import codecs
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Iterator, Mapping

from fumarole.policy_lang import file_errors
from fumarole.policy_lang.diagnostics import FumaroleError, Span


class NotText(ValueError):
    """Bytes that are not UTF-8 text: ``reason`` and the 1-based line and column of the first bad byte."""

    def __init__(self, reason: str, line: int, col: int) -> None:
        super().__init__(reason)
        self.reason, self.line, self.col = reason, line, col


def decode(data: bytes) -> str:
    """``data`` as UTF-8 text; raises NotText naming the first byte that is not."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise NotText("not UTF-8 text (UTF-16, by its byte-order mark): save it as UTF-8", 1, 1)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise NotText(f"not UTF-8 text (byte 0x{data[exc.start]:02x}: {exc.reason})", line, col) from None


# Texts that stand in for files on disk: an editor's unsaved buffers (fumarole lsp).
_UNSAVED: ContextVar[Mapping[Path, str]] = ContextVar("unsaved", default={})


@contextmanager
def unsaved_buffers(texts: Mapping[Path, str]) -> Iterator[None]:
    """Within the block, :func:`read_text` answers these texts for these paths instead of the disk's."""
    token = _UNSAVED.set({path.resolve(): text for path, text in texts.items()})
    try:
        yield
    finally:
        _UNSAVED.reset(token)


def display_path(path: Path) -> str:
    """A path as messages name it: relative to the working folder when it is inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def read_text(path: Path, file: str | None = None) -> str:
    """The UTF-8 text of ``path``; raises FumaroleError (F001) when it cannot be read or is not text."""
    unsaved = _UNSAVED.get()
    if unsaved and path.resolve() in unsaved:
        return unsaved[path.resolve()]
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FumaroleError([file_errors.unreadable(path, exc.strerror, file or str(path))]) from None
    return decode_file(data, path, file)


def decode_file(data: bytes, path: Path, file: str | None = None) -> str:
    """The bytes read from ``path`` as text; raises FumaroleError (F001) at the first byte that is not UTF-8."""
    try:
        return decode(data)
    except NotText as exc:
        raise FumaroleError([file_errors.unreadable(path, exc.reason, file or str(path),
                                                    Span(exc.line, exc.col))]) from None
