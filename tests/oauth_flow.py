"""Steps of an OAuth client against Brain, for the tests: PKCE, registration, consent and the
token endpoint, spoken with Django's test client (the same database as the live server), and the
token endpoint, registration and /mcp over HTTP against the served app."""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
from django.test import Client

REDIRECT = "http://127.0.0.1:7777/callback"


@dataclass
class Pkce:
    verifier: str
    challenge: str


def pkce() -> Pkce:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return Pkce(verifier, challenge)


def register(client: Client, **metadata: Any) -> Any:
    body = {"client_name": "Test Assistant", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}
    body.update(metadata)
    return client.post("/oauth/register/", body, content_type="application/json")


def authorize_query(client_id: str, code: Pkce, target: str, **extra: str | None) -> str:
    params: dict[str, str | None] = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": code.challenge,
        "code_challenge_method": "S256",
        "state": "st-123",
        "scope": "read write",
        "resource": target,
    }
    params.update(extra)
    return "/oauth/authorize/?" + urlencode({k: v for k, v in params.items() if v is not None})


def redirect_params(response: Any) -> dict[str, str]:
    assert response.status_code == 302, response.content[:500]
    return {k: v[0] for k, v in parse_qs(urlsplit(response["Location"]).query).items()}


def consent(
    client: Client, client_id: str, code: Pkce, resource: str, *, org: int, access: str = "write", allow: bool = True
) -> dict[str, str]:
    """Show the consent page, answer it, and return the parameters sent back to the app."""
    page = client.get(authorize_query(client_id, code, resource))
    assert page.status_code == 200, page.content[:800]
    form = page.context["form"]
    data = {name: form.initial.get(name) or "" for name in form.fields if name not in ("allow", "org", "access")}
    data.update(org=str(org), access=access)
    if allow:
        data["allow"] = "on"
    return redirect_params(client.post("/oauth/authorize/", data))


def token(client: Client, **fields: str) -> Any:
    return client.post("/oauth/token/", fields)


def exchange(client: Client, client_id: str, code: str, verifier: str, resource: str | None = None) -> Any:
    fields = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "client_id": client_id,
        "code_verifier": verifier,
    }
    if resource:
        fields["resource"] = resource
    return token(client, **fields)


def connect(client: Client, org_id: int, base: str, access: str = "write") -> tuple[str, dict[str, Any]]:
    """Register an app, allow it as the person signed in on ``client``, and exchange the code:
    the client id and the token response."""
    client_id = register(Client()).json()["client_id"]
    code = pkce()
    sent = consent(client, client_id, code, f"{base}/mcp", org=org_id, access=access)
    answer = exchange(Client(), client_id, sent["code"], code.verifier)
    assert answer.status_code == 200, answer.content
    return client_id, answer.json()


def token_over_http(base: str, **fields: str) -> httpx.Response:
    return httpx.post(f"{base}/oauth/token/", data=fields, timeout=30)


def register_over_http(base: str) -> httpx.Response:
    body = {"client_name": "Test Assistant", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}
    return httpx.post(f"{base}/oauth/register/", json=body, timeout=30)


def mcp_status(base: str, token: str) -> int:
    """The HTTP status /mcp answers a tools/list with this bearer token."""
    listed = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    return httpx.post(f"{base}/mcp", json=listed, headers={"Authorization": f"Bearer {token}"}, timeout=30).status_code
