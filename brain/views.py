"""Web pages: login (Django's), and Connect an assistant (tokens and client configuration)."""

from __future__ import annotations

import json
from typing import cast

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from brain.actors import Actor
from brain.errors import DomainError
from brain.inputs import text_problem, whole_number
from brain.models import ApiToken
from brain.selectors import list_user_organisations, list_user_tokens
from brain.services import create_token, revoke_token
from usage.selectors import get_member_month

EXPIRY_CHOICES = [("", "Never"), ("30", "30 days"), ("90", "90 days"), ("365", "1 year")]


def _user(request: HttpRequest) -> User:
    """The logged-in user (the views below are all behind login_required)."""
    return cast(User, request.user)


def home(request: HttpRequest) -> HttpResponseRedirect:
    return redirect("connect" if request.user.is_authenticated else "login")


def client_configs(url: str, token: str) -> list[dict[str, str]]:
    auth = f"Bearer {token}"
    http_server = {"type": "http", "url": url, "headers": {"Authorization": auth}}
    return [
        {
            "name": "Claude Code",
            "where": "Run in a terminal",
            "text": f'claude mcp add --transport http brain {url} --header "Authorization: {auth}"',
        },
        {
            "name": "Cursor",
            "where": "~/.cursor/mcp.json",
            "text": json.dumps({"mcpServers": {"brain": {"url": url, "headers": {"Authorization": auth}}}}, indent=2),
        },
        {
            "name": "VS Code",
            "where": ".vscode/mcp.json",
            "text": json.dumps({"servers": {"brain": http_server}}, indent=2),
        },
        {
            "name": "Claude Desktop and other stdio-only clients",
            "where": "claude_desktop_config.json (uses the mcp-remote bridge)",
            "text": json.dumps(
                {
                    "mcpServers": {
                        "brain": {
                            "command": "npx",
                            "args": ["-y", "mcp-remote", url, "--header", "Authorization:${BRAIN_AUTH}"],
                            "env": {"BRAIN_AUTH": auth},
                        }
                    }
                },
                indent=2,
            ),
        },
        {
            "name": "Check it with curl",
            "where": "Run in a terminal",
            "text": (
                f"curl -s {url} -H 'Authorization: {auth}' -H 'Content-Type: application/json' "
                "-H 'Accept: application/json, text/event-stream' "
                """-d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'"""
            ),
        },
    ]


@login_required
def connect(request: HttpRequest) -> HttpResponse:
    orgs = list(list_user_organisations(user=_user(request)))
    issued = None
    if request.method == "POST":
        org = next((o for o in orgs if str(o.pk) == request.POST.get("org")), None)
        access = request.POST.get("access")
        scopes = {"write": ["read", "write"], "personal": ["read", "write", "personal"]}.get(access or "", ["read"])
        name = request.POST.get("name", "").strip()[:100]
        try:
            if org is None:
                raise DomainError("Choose one of your organisations.")
            if problem := text_problem(name):
                raise DomainError(f"The name {problem}; choose another.")
            issued = create_token(
                org=org,
                user=_user(request),
                scopes=scopes,
                name=name,
                expires_in_days=_expiry_days(request.POST.get("expires", "")),
                via="web",
            )
        except DomainError as exc:
            messages.error(request, exc.message)
    url = f"{settings.BRAIN_BASE_URL}/mcp"
    return render(
        request,
        "brain/connect.html",
        {
            "orgs": orgs,
            "months": [(org, get_member_month(org=org, user=_user(request))) for org in orgs],
            "tokens": list_user_tokens(user=_user(request)),
            "issued": issued,
            "configs": client_configs(url, issued.plaintext if issued else "<your token>"),
            "mcp_url": url,
            "expiry_choices": EXPIRY_CHOICES,
        },
        status=400 if request.method == "POST" and issued is None else 200,
    )


def _expiry_days(value: str) -> int | None:
    """The form's expiry: empty means never; anything but a whole number of days is a form error."""
    if not value.strip():
        return None
    days = whole_number(value)
    if days is None:
        raise DomainError("Choose an expiry from the list.")
    return days


@login_required
@require_POST
def revoke(request: HttpRequest, token_id: int) -> HttpResponseRedirect:
    token = ApiToken.objects.filter(pk=token_id, user=_user(request)).select_related("org").first()
    if token is None:
        messages.error(request, "No such token.")
    else:
        # Anyone may revoke their own token, also after leaving its organisation.
        actor = Actor(org=token.org, user=_user(request), scopes=frozenset({"read", "write"}), via="web")
        revoke_token(actor=actor, token_id=token.pk)
        messages.success(request, f"Token {token} revoked. Assistants using it are disconnected.")
    return HttpResponseRedirect(reverse("connect"))
