"""uvicorn's httptools protocol, with a bound on the head of a request.

uvicorn's pure-Python parser (h11) refuses a request whose request line and headers pass 16 KB;
the C parser (httptools) keeps whatever arrives before the blank line that ends them. Measured:
one 200 MB header took a server from 70 to 388 MB, where h11 answered 400 after the first
megabyte and stayed at 70. This protocol counts the bytes of a head still open as reads arrive
and, past ``MAX_HEAD_BYTES``, answers 400 and closes the connection, as h11 does: the server
holds at most that and one read more. Like h11, it leaves alone a head that ends within the read
that holds it (a long URL sent at once). ``launcher.processes.HTTP_PARSER`` names it for every
web server.
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as UvicornHttpTools

# h11's own default (``max_incomplete_event_size``): what Brain's web server accepted before.
MAX_HEAD_BYTES = 16 * 1024
TOO_LARGE = "The request line and headers are too large."


class HttpToolsProtocol(UvicornHttpTools):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._in_head = True  # from the end of a request (or the connection's start) to the end of the next head
        self._heads_ended = 0
        self._open_head_bytes = 0  # bytes of the reads spent wholly inside the head still open
        self._refused = False

    def data_received(self, data: bytes) -> None:
        was_in_head, ended = self._in_head, self._heads_ended
        super().data_received(data)
        if self.transport.is_closing():
            return
        if self._heads_ended != ended:
            # A head ended in this read: it held at most the bound and this read (h11 too parses
            # a whole head it has in hand, whatever its size). What follows it here, a body or
            # the next head's first bytes, is at most this one read.
            self._open_head_bytes = 0
        elif was_in_head and self._in_head:
            # A read wholly inside a head: counted, and refused past the bound without waiting
            # for an end that may never come.
            self._open_head_bytes += len(data)
            if self._open_head_bytes > MAX_HEAD_BYTES:
                self._refused = True
                self.send_400_response(TOO_LARGE)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._heads_ended += 1
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_head = True

    def send_400_response(self, msg: str) -> None:
        if self._refused:
            self.logger.warning("A request's line and headers passed %d bytes; refused.", MAX_HEAD_BYTES)
        super().send_400_response(TOO_LARGE if self._refused else msg)
