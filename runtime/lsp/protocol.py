"""The JSON-RPC protocol of ``fumarole lsp``: a request whose params do not fit still gets an answer.

pygls turns each message into lsprotocol's typed request while reading it; a
request whose ``params`` is ``null``, a string or an object of the wrong
shape fails there, before any handler runs, and pygls only logs it: the
editor waits forever for the answer.  JSON-RPC says a request is always
answered, so here such a request gets the error response ``Invalid params``
(-32602, or the error pygls raised) with its id, and reading goes on.
"""

from __future__ import annotations

from typing import Any

from lsprotocol.types import ResponseError
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol

_ANSWERED = object()  # what a refused request becomes once its error response is sent


class AnsweringProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if not ("jsonrpc" in data and "method" in data and isinstance(data.get("id"), (int, str))):
                raise  # a notification or a response: there is nobody to answer
            detail = f"{exc.message or 'invalid message'}: params of {data['method']!r} do not have its shape"
            self._send_response(data["id"], error=ResponseError(code=exc.code, message=detail))
            return _ANSWERED

    def handle_message(self, message: Any) -> None:
        if message is not _ANSWERED:
            super().handle_message(message)
