"""uvicorn's httptools protocol, with a bound on the head of a request.

uvicorn's pure-Python parser (h11) refuses a request whose request line and headers pass 16 KB;
the C parser (httptools) keeps whatever arrives before the blank line that ends them. Measured:
one 200 MB header took a server from 70 to 388 MB, where h11 answered 400 after the first
megabyte and stayed at 70. This protocol counts the bytes of a request's head as they arrive and,
past ``MAX_HEAD_BYTES``, answers 400 and closes the connection, as h11 does: the server holds at
most that and one read more. ``launcher.processes.HTTP_PARSER`` names it for every web server.
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as UvicornHttpTools

# h11's own default (``max_incomplete_event_size``): what Brain's web server accepted before.
MAX_HEAD_BYTES = 16 * 1024
TOO_LARGE = "The request line and headers are too large."


class HeadTooLarge(Exception):
    """Raised in the parser's callback; uvicorn answers a parser's failure with 400 and closes."""


class HttpToolsProtocol(UvicornHttpTools):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._in_head = True  # from a request's first byte to the end of its headers
        self._head_bytes = 0
        self._refused = False

    def data_received(self, data: bytes) -> None:
        was_in_head = self._in_head
        super().data_received(data)
        # A head still open after this read: count the read, and refuse past the bound without
        # waiting for an end that may never come. A head that ended in it is measured whole by
        # on_headers_complete.
        if not (was_in_head and self._in_head) or self.transport.is_closing():
            return
        self._head_bytes += len(data)
        if self._head_bytes > MAX_HEAD_BYTES:
            self._refused = True
            self.send_400_response(TOO_LARGE)

    def on_headers_complete(self) -> None:
        self._in_head = False
        size = len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)
        if size > MAX_HEAD_BYTES:
            self._refused = True
            raise HeadTooLarge
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_head, self._head_bytes = True, 0

    def send_400_response(self, msg: str) -> None:
        if self._refused:
            self.logger.warning("A request's line and headers passed %d bytes; refused.", MAX_HEAD_BYTES)
        super().send_400_response(TOO_LARGE if self._refused else msg)
