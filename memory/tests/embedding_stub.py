"""An OpenAI-compatible embeddings endpoint on loopback, for the remote embedder and switches of models."""

import json
import re
import threading
import zlib
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pytest


def words_vector(text: str, dimensions: int) -> list[float]:
    """A bag of words hashed into the dimensions: texts sharing words are near, as with a model."""
    vector = np.zeros(dimensions)
    vector[0] = 0.01  # never all zeros
    for word in re.findall(r"\w+", text.lower()):
        vector[zlib.crc32(word.encode()) % dimensions] += 1.0
    return vector.tolist()


class EmbeddingsStub(BaseHTTPRequestHandler):
    """Speaks OpenAI's POST /embeddings; a deterministic vector per input (``words_vector``)."""

    requests: list[dict] = []

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        EmbeddingsStub.requests.append({"body": body, "auth": self.headers.get("Authorization")})
        if body["input"] == ["fail"]:
            self.send_response(500)
            self.end_headers()
            return
        data = []
        for i, text in enumerate(body["input"]):
            data.append({"object": "embedding", "index": i, "embedding": words_vector(text, body["dimensions"])})
        payload = json.dumps({"object": "list", "data": list(reversed(data)), "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def stub_url():
    server = HTTPServer(("127.0.0.1", 0), EmbeddingsStub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()
