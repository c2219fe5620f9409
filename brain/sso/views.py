"""The sign-in button's address (``/sso/<organisation>/login/``) and the one callback.

The request view is mozilla-django-oidc's, given the organisation's provider; it keeps the
state, the nonce and the PKCE verifier in the session, and the organisation and the page to go
back to are kept beside them, so a callback is finished only for the organisation it started for
and only once.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
from django.conf import settings
from django.contrib import auth
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render, resolve_url
from django.views.decorators.http import require_POST
from django.views.generic import View
from mozilla_django_oidc.views import OIDCAuthenticationRequestView

from brain.core.errors import DomainError
from brain.models import SingleSignOn
from brain.sso.passwords import provider_for_address
from brain.sso.provider import SESSION_BACKEND, OrganisationClient, client_settings, discover

log = logging.getLogger("brain.sso")

STATES = "oidc_states"  # the library's session key


class SignInFailed(DomainError):
    code, status = "sso_failed", 400


def _enabled(org_slug: str | None = None, org_id: int | None = None) -> SingleSignOn:
    found = SingleSignOn.objects.select_related("org").filter(enabled=True)
    sso = found.filter(org__slug=org_slug).first() if org_slug is not None else found.filter(org_id=org_id).first()
    if sso is None:
        raise SignInFailed("This organisation has no single sign-on switched on; sign in with your password.")
    return sso


def refused(request: HttpRequest, error: DomainError) -> HttpResponse:
    return render(request, "registration/sso_refused.html", {"message": error.message}, status=error.status)


class SsoLoginView(OIDCAuthenticationRequestView):
    """Sends the browser to the organisation's provider to sign in."""

    def __init__(self, **kwargs: Any) -> None:
        View.__init__(self, **kwargs)  # the library's reads one provider from the settings
        self.settings: dict[str, Any] = {}

    def get_settings(self, attr: str, *default: Any) -> Any:
        return self.settings.get(attr, default[0] if default else None)

    def get(self, request: HttpRequest, org_slug: str) -> HttpResponse:
        try:
            sso = _enabled(org_slug=org_slug)
            metadata = discover(sso.issuer)
        except DomainError as error:
            return refused(request, error)
        self.settings = client_settings(sso, metadata)
        self.OIDC_OP_AUTH_ENDPOINT = metadata.authorization_endpoint
        self.OIDC_RP_CLIENT_ID = sso.client_id
        response: HttpResponse = super().get(request)
        state = parse_qs(urlsplit(response["Location"]).query)["state"][0]
        request.session[STATES][state].update(org=sso.org_id, next=request.session.pop("oidc_login_next", None))
        request.session.modified = True
        return response


def sso_callback(request: HttpRequest) -> HttpResponse:
    """Where every provider sends the browser back: finishes the sign-in the state names, once."""
    states = request.session.get(STATES) or {}
    started = states.pop(request.GET.get("state", ""), None)  # gone for good: a state is used once
    request.session.modified = True
    if started is None or "org" not in started:
        return refused(
            request, SignInFailed("This sign-in was already used or has expired. Start again from the login page.")
        )
    if request.GET.get("error"):
        described = request.GET.get("error_description") or request.GET["error"]
        return refused(request, SignInFailed(f"The provider did not sign you in: {described[:200]}"))
    try:
        sso = _enabled(org_id=started["org"])
        client = OrganisationClient(sso, discover(sso.issuer))
        user = client.authenticate(request, nonce=started["nonce"], code_verifier=started.get("code_verifier"))
    except DomainError as error:
        return refused(request, error)
    except (SuspiciousOperation, jwt.InvalidTokenError, OSError, KeyError, ValueError) as exc:
        log.warning("single sign-on for org %s refused: %s", started["org"], exc)
        user = None
    if user is None or not user.is_active:
        return refused(
            request, SignInFailed("The provider's answer could not be trusted, so nobody was signed in. Start again.")
        )
    auth.login(request, user, backend=SESSION_BACKEND)
    return HttpResponseRedirect(started.get("next") or resolve_url(settings.LOGIN_REDIRECT_URL))


NO_PROVIDER = "none"  # the login page's notice: no company sign-in answers for that address


@require_POST
def sso_find(request: HttpRequest) -> HttpResponse:
    """The login page's "Sign in with your company account": the work address names the
    organisation whose provider signs the person in. The answer is the same redirect to the login
    page for an address no organisation answers and for one several do, so it says nothing of
    who uses this installation."""
    next_url = request.POST.get("next", "")
    sso = provider_for_address(request.POST.get("email", ""))
    if sso is None:
        return HttpResponseRedirect(f"{resolve_url('login')}?{urlencode({'sso': NO_PROVIDER, 'next': next_url})}")
    query = f"?{urlencode({'next': next_url})}" if next_url else ""
    return HttpResponseRedirect(resolve_url("sso-login", sso.org.slug) + query)
