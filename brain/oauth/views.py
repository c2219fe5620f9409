"""OAuth pages and endpoints: discovery metadata (RFC 9728 and RFC 8414), registration (RFC 7591),
the consent page, and the page where a person sees and disconnects their connected apps. The token
and revocation endpoints are the toolkit's own (brain.oauth.urls)."""

from __future__ import annotations

import json
from typing import Any, cast
from urllib.parse import parse_qs, parse_qsl, urlencode, urlsplit, urlunsplit

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.forms import AllowForm
from oauth2_provider.models import Application
from oauth2_provider.views import AuthorizationView, TokenView
from oauth2_provider.views.dynamic_client_registration import (
    DynamicClientRegistrationManagementView,
    DynamicClientRegistrationView,
    _error_response,
)
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error, InvalidRequestError

from brain.core.errors import DomainError
from brain.core.inputs import text_problem
from brain.core.selectors import list_user_organisations
from brain.faces.login_throttle import client_ip
from brain.models import ApiToken, Organisation
from brain.oauth.clients import is_loopback, metadata_problem
from brain.oauth.codes import end_code, exchanging
from brain.oauth.connections import app_connections, connect_app, disconnect_app, is_mcp_resource, issuer, mcp_resource
from brain.oauth.registrations import registration_allowed

# The three kinds of access in words, as on the Connect page (ApiToken.ACCESS), with what each lets an app do.
ACCESS_HELP = {
    ApiToken.READ: "search and read what you may read",
    ApiToken.WRITE: "also save shared knowledge as you",
    ApiToken.PERSONAL: "read, and save only to your personal memory",
}


def _json(data: dict[str, Any]) -> JsonResponse:
    response = JsonResponse(data)
    response["Access-Control-Allow-Origin"] = "*"  # browser-based clients read discovery documents too
    response["Cache-Control"] = "public, max-age=300"
    return response


def protected_resource_metadata(request: HttpRequest) -> JsonResponse:
    """RFC 9728: what /mcp is and which authorisation server issues its tokens (this one)."""
    return _json(
        {
            "resource": mcp_resource(),
            "authorization_servers": [issuer()],
            "scopes_supported": ["read", "write", "personal"],
            "bearer_methods_supported": ["header"],
            "resource_name": "Brain",
            "resource_documentation": f"{issuer()}{reverse('api-docs')}",
        }
    )


def authorization_server_metadata(request: HttpRequest) -> JsonResponse:
    """RFC 8414: the endpoints and what they accept."""
    base = issuer()
    data: dict[str, Any] = {
        "issuer": base,
        "authorization_endpoint": base + reverse("oauth2_provider:authorize"),
        "token_endpoint": base + reverse("oauth2_provider:token"),
        "revocation_endpoint": base + reverse("oauth2_provider:revoke-token"),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
        "revocation_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
        "scopes_supported": ["read", "write", "personal"],
        "client_id_metadata_document_supported": bool(settings.BRAIN_OAUTH_CLIENT_METADATA),
        "authorization_response_iss_parameter_supported": True,
        "service_documentation": base + "/connect/",
    }
    if settings.BRAIN_OAUTH_REGISTRATION:
        data["registration_endpoint"] = base + reverse("oauth2_provider:dcr-register")
    return _json(data)


def _refusal(request: HttpRequest) -> HttpResponse | None:
    """The RFC 7591 error for registration metadata Brain will not take, or None."""
    try:
        data = json.loads(request.body)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return _error_response("invalid_client_metadata", "The request body must be a JSON object.")
    if problem := metadata_problem(data):
        return _error_response(*problem)
    return None


class RegisterView(DynamicClientRegistrationView):
    """RFC 7591 with Brain's rules first (brain.oauth.clients): authorisation code only, and
    redirect addresses that are HTTPS, loopback, or an allowed app scheme and host."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if refused := _refusal(request):
            return refused
        if not registration_allowed(client_ip(request)):
            answer = _error_response(
                "too_many_requests",
                f"At most {settings.BRAIN_OAUTH_REGISTRATIONS_PER_HOUR} registrations an hour from one address; "
                "try again later.",
                status=429,
            )
            answer["Retry-After"] = "3600"
            return answer
        with transaction.atomic():
            return cast(HttpResponse, super().post(request, *args, **kwargs))


class RegistrationView(DynamicClientRegistrationManagementView):
    """RFC 7592: a registered app reads, updates or deletes its registration with the token it got;
    an update follows the same rules as registering."""

    def put(self, request: HttpRequest, client_id: str, *args: Any, **kwargs: Any) -> HttpResponse:
        if refused := _refusal(request):
            return refused
        return cast(HttpResponse, super().put(request, client_id, *args, **kwargs))


class TokenEndpoint(TokenView):
    """The toolkit's token endpoint, with a code used at most once (brain.oauth.codes): any refused
    exchange ends the code, and a code presented after its exchange ends that exchange's tokens.
    A refusal raised while the token is being saved (a resource other than /mcp) comes back
    without a content type; it is JSON like every other answer."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        code = request.POST.get("code", "") if request.POST.get("grant_type") == "authorization_code" else ""
        if not code:
            return self._answer(request, *args, **kwargs)
        with exchanging(code):
            response = self._answer(request, *args, **kwargs)
            if response.status_code >= 400:
                end_code(code)
        return response

    def _answer(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = cast(HttpResponse, super().post(request, *args, **kwargs))
        if response.status_code >= 400 and response.content.startswith(b"{"):
            response["Content-Type"] = "application/json"
        return response


class ConsentForm(AllowForm):
    org = forms.TypedChoiceField(coerce=int, choices=())
    access = forms.ChoiceField(choices=[(key, label) for key, (_scopes, label) in ApiToken.ACCESS.items()])

    def __init__(self, *args: Any, orgs: list[Organisation], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = cast(forms.TypedChoiceField, self.fields["org"])
        field.choices = [(org.pk, org.name) for org in orgs]


def _asked_access(scopes: list[str]) -> str:
    """The access to offer first: what the app asked for, read and write when it named nothing."""
    if "personal" in scopes:
        return ApiToken.PERSONAL
    if "write" in scopes or not scopes:
        return ApiToken.WRITE
    return ApiToken.READ


class ConsentView(AuthorizationView):
    """The authorise page: after the normal sign-in, it names the app as it named itself, the
    organisation it will act in and the access it gets; allowing records the connection and sends
    the code, denying sends ``access_denied``. PKCE with S256 and this server's MCP URL as the
    resource are checked before the page is shown, and the refusal goes back to the app."""

    template_name = "brain/oauth/authorize.html"
    form_class = ConsentForm

    def redirect(self, redirect_to: str, application: Application | None) -> HttpResponse:
        """Every answer that goes back to the app names this server as its issuer (RFC 9207), so
        an app talking to several servers can tell whose answer it got; the toolkit would derive
        the issuer from the request, Brain takes its configured public URL."""
        parts = urlsplit(redirect_to)
        query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "iss"]
        query.append(("iss", issuer()))
        return cast(HttpResponse, super().redirect(urlunsplit(parts._replace(query=urlencode(query))), application))

    def get_form_kwargs(self) -> dict[str, Any]:
        return {**super().get_form_kwargs(), "orgs": self._orgs()}

    def _orgs(self) -> list[Organisation]:
        return list(list_user_organisations(user=cast(User, self.request.user)))

    def get_initial(self) -> dict[str, Any]:
        initial = super().get_initial()
        orgs = self._orgs()
        initial["access"] = _asked_access(initial.get("scope", "").split())
        initial["org"] = orgs[0].pk if orgs else None
        return initial

    def validate_authorization_request(self, request: HttpRequest) -> tuple[list[str], dict[str, Any]]:
        scopes, credentials = super().validate_authorization_request(request)
        refusal: CustomOAuth2Error | None = None
        unstorable = next((k for k in request.GET for v in request.GET.getlist(k) if text_problem(v)), None)
        if unstorable:
            refusal = InvalidRequestError(description=f"The {unstorable} parameter holds text Brain cannot store.")
        elif credentials.get("code_challenge_method") != "S256":
            refusal = InvalidRequestError(description="PKCE is required with code_challenge_method=S256.")
        elif not all(is_mcp_resource(r) for r in request.GET.getlist("resource")):
            refusal = CustomOAuth2Error(
                error="invalid_target",
                description=f"This server issues tokens only for its MCP endpoint, {mcp_resource()}.",
            )
        if refusal is not None:
            refusal.state = credentials.get("state")
            raise OAuthToolkitError(error=refusal, redirect_uri=credentials["redirect_uri"])
        return scopes, credentials

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        application = context.get("application")
        if isinstance(application, Application):
            redirect = urlsplit(str(context.get("redirect_uri") or ""))
            context.update(
                orgs=self._orgs(),
                access_choices=[(k, label, ACCESS_HELP[k]) for k, (_s, label) in ApiToken.ACCESS.items()],
                app_name=application.name or "An app with no name",
                identified_by=urlsplit(application.client_id).hostname
                if application.client_id.startswith("https://")
                else "",
                redirect_host=("this computer" if is_loopback(redirect.hostname or "") else redirect.hostname)
                or redirect.scheme,
                mcp_url=mcp_resource(),
            )
        return context

    def form_valid(self, form: ConsentForm) -> HttpResponse:
        allow = form.cleaned_data.get("allow")
        if not allow:
            return cast(HttpResponse, super().form_valid(form))
        application = Application.objects.filter(client_id=form.cleaned_data["client_id"]).first()
        org = next((o for o in self._orgs() if o.pk == form.cleaned_data["org"]), None)
        if application is None or org is None:
            return self.form_invalid(form)
        with transaction.atomic():
            connection = connect_app(
                user=cast(User, self.request.user), org=org, application=application, access=form.cleaned_data["access"]
            )
            form.cleaned_data["scope"] = " ".join(connection.scopes)
            response = cast(HttpResponse, super().form_valid(form))
            if "error" in parse_qs(urlsplit(response.get("Location", "")).query):
                transaction.set_rollback(True)  # nothing is kept for a request the app will not finish
        return response


@login_required
def connected_apps(request: HttpRequest) -> HttpResponse:
    rows = list(app_connections(user=cast(User, request.user)))
    return render(
        request,
        "brain/oauth/connected_apps.html",
        {
            "active": [r for r in rows if r.is_active],
            "ended": [r for r in rows if not r.is_active],
            "mcp_url": mcp_resource(),
        },
    )


@login_required
@require_POST
def disconnect(request: HttpRequest, connection_id: int) -> HttpResponse:
    try:
        row = disconnect_app(user=cast(User, request.user), connection_id=connection_id)
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"{row.name} is disconnected: its access ended at once.")
    return HttpResponseRedirect(reverse("connected-apps"))
