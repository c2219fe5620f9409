"""The Origin check on /mcp matches the whole origin: scheme, host and port."""

from __future__ import annotations

import httpx
import pytest

from brain.mcp.gateway import origin_allowed
from conftest import make_org, make_token

DEFAULTS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*", "https://brain.example.com"]
LIST = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

LOOKALIKES = [
    "http://127.0.0.1:8000.evil.example",
    "http://127.0.0.1.evil.example:8000",
    "http://127.0.0.1:8000@evil.example",
    "http://localhost.evil.example",
    "http://localhost:3000.evil.example",
    "https://127.0.0.1:8000",  # another scheme
    "http://[::1]:3000.evil.example",
    "https://brain.example.com.evil.example",
    "https://brain.example.com:8443",  # another port of an exact origin
    "http://brain.example.com",
    "http://127.0.0.1:8000/path",
    "null",
    "127.0.0.1:8000",
]


@pytest.mark.parametrize("origin", LOOKALIKES)
def test_origins_that_only_begin_like_an_allowed_one_are_refused(origin):
    assert not origin_allowed(origin, DEFAULTS)


@pytest.mark.parametrize(
    "origin",
    [
        "http://127.0.0.1:8000",
        "http://127.0.0.1",
        "http://localhost:3000",
        "http://[::1]:5173",
        "https://brain.example.com",
        "https://brain.example.com:443",
        "HTTP://LOCALHOST:3000",
        "",
    ],
)
def test_allowed_hosts_match_with_any_port_and_exact_origins_exactly(origin):
    assert origin_allowed(origin, DEFAULTS)


def test_a_base_url_with_a_path_allows_its_origin():
    assert origin_allowed("https://example.com", ["https://example.com/brain"])


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("origin", ["http://127.0.0.1:8000.evil.example", "http://localhost:3000.evil.example"])
def test_a_lookalike_origin_gets_403_over_mcp(brain_url, origin):
    token = make_token(make_org()).plaintext
    headers = {**HEADERS, "Authorization": f"Bearer {token}", "Origin": origin}
    assert httpx.post(f"{brain_url}/mcp", content=LIST, headers=headers, timeout=30).status_code == 403
    headers["Origin"] = "http://127.0.0.1:8000"
    assert httpx.post(f"{brain_url}/mcp", content=LIST, headers=headers, timeout=30).status_code == 200
