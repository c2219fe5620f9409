"""A chat-completions model on loopback for the jobs' tests: the handler decides what it answers,
this module speaks the protocol and points Brain at it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any


def send_completion(handler: BaseHTTPRequestHandler, message: dict[str, Any], *, tokens: int = 100) -> None:
    """Answer the request with one choice holding ``message``, as an OpenAI-compatible server does."""
    payload = json.dumps({"choices": [{"message": message}], "usage": {"total_tokens": tokens}}).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(payload)))
    handler.end_headers()
    handler.wfile.write(payload)


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler], settings: Any) -> Iterator[None]:
    """Serve ``handler`` on a free loopback port as Brain's model while the block runs."""
    server = HTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.BRAIN_LLM_URL = f"http://127.0.0.1:{server.server_port}/v1"
    settings.BRAIN_EXTRACT_FACTS = False
    try:
        yield
    finally:
        server.shutdown()
