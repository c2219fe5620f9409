"""Django's login signals turned into audit records (the rule is ``brain.core.sign_ins``): the
page a person used (the admin's login or the site's) and the address they came from."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest

from brain.core.sign_ins import PASSWORD, PASSWORD_BACKEND, record_failed_sign_in, record_sign_in, record_sign_out
from brain.faces.login_throttle import client_ip


def _via(request: HttpRequest | None) -> str:
    return "admin" if request is not None and request.path.startswith("/admin/") else "web"


def _address(request: HttpRequest | None) -> str | None:
    return client_ip(request) if request is not None else None


def on_logged_in(sender: Any, request: HttpRequest | None, user: User, **kwargs: Any) -> None:
    if getattr(user, "backend", None) != PASSWORD_BACKEND:
        return  # another way in (single sign-on) writes its own record
    if request is None or request.method != "POST":
        return  # no login form was sent: a session made in code (a shell, a test client), not a person
    record_sign_in(user=user, method=PASSWORD, via=_via(request), address=_address(request))


def on_logged_out(sender: Any, request: HttpRequest | None, user: User | None, **kwargs: Any) -> None:
    if user is not None and user.is_authenticated:
        record_sign_out(user=user, via=_via(request))


def on_login_failed(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **kwargs: Any
) -> None:
    if getattr(request, "axes_locked_out", False):
        return  # refused by the throttle unchecked: it counts these, and they would flood the trail
    username = credentials.get("username")
    if isinstance(username, str):
        record_failed_sign_in(username=username, via=_via(request), address=_address(request))
