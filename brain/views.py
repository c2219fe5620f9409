"""Web pages: login (Django's), Connect an assistant (tokens and client configuration), a member's
own account (name, time zone, password, tokens), the page where an invited member sets their
password, and the one where someone with an account answers invitations to organisations."""

from __future__ import annotations

import json
from typing import Any, cast
from urllib.parse import quote

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import update_session_auth_hash
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import PasswordChangeForm, SetPasswordForm
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_POST

from brain.core.accounts import get_time_zone, record_password_change, time_zone_choices, update_account
from brain.core.actors import Actor
from brain.core.errors import DomainError
from brain.core.inputs import text_problem, whole_number
from brain.core.invitations import (
    answer_invitation,
    has_open_invitation,
    invited_user,
    link_lifetime,
    list_open_invitations,
)
from brain.core.selectors import administers_any, list_user_organisations, list_user_tokens
from brain.core.services import IssuedToken, create_token, revoke_token
from brain.models import ApiToken, Organisation
from brain.sso.passwords import PasswordLoginForm, company_sign_in_offered, sign_in_choices
from usage.selectors import get_member_month

# What each kind of access lets an assistant do, after its name (ApiToken.ACCESS) in the form.
ACCESS_HELP = {
    ApiToken.READ: "search and read",
    ApiToken.WRITE: "also save shared knowledge",
    ApiToken.PERSONAL: "read, and save only to your personal memory",
}
EXPIRY_CHOICES = [("", "Never"), ("30", "30 days"), ("90", "90 days"), ("365", "1 year")]


def _user(request: HttpRequest) -> User:
    """The logged-in user (the views below are all behind login_required)."""
    return cast(User, request.user)


class LoginView(auth_views.LoginView):
    """Django's login; ``?username=`` fills the box in (the page after setting a password sends it)."""

    form_class = PasswordLoginForm  # refuses the password where the organisation signs in with its provider

    def get_initial(self) -> dict[str, Any]:
        return {"username": self.request.GET.get("username", "")[:150]}

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["sign_in_choices"] = sign_in_choices(self.get_redirect_url())
        context["company_sign_in"] = company_sign_in_offered()
        context["no_company_sign_in"] = self.request.GET.get("sso") == "none"
        return context


def favicon(request: HttpRequest) -> HttpResponsePermanentRedirect:
    """For whatever asks for /favicon.ico without reading a page's icon link (API answers, feeds)."""
    return HttpResponsePermanentRedirect(static("brain/favicon.svg"))


def home(request: HttpRequest) -> HttpResponseRedirect:
    """Where ``/`` leads: someone with an invitation to answer to their invitations, admins to the
    overview (what waits for them), members to search, and anyone else to the login, which comes
    back here to choose."""
    if not request.user.is_authenticated:
        return HttpResponseRedirect(f"{reverse('login')}?next={quote(reverse('home'))}")
    if has_open_invitation(user=_user(request)):
        return redirect("invitations")
    return redirect("overview" if administers_any(user=request.user) else "memory-search")


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


# Where a token just issued waits for the one page that shows it (POST/redirect/GET).
ISSUED_KEY = "brain.connect.issued"


@login_required
def connect(request: HttpRequest) -> HttpResponse:
    """The Connect page. Creating a token redirects back here, so reloading never issues a second
    one; the plaintext travels in the session to the next page view, which shows it and drops it."""
    orgs = list(list_user_organisations(user=_user(request)))
    if request.method == "POST":
        try:
            issued = _create_from_form(request, orgs)
        except DomainError as exc:
            messages.error(request, exc.message)
            return _connect_page(request, orgs, issued=None, status=400)
        request.session[ISSUED_KEY] = {"token_id": issued.token.pk, "plaintext": issued.plaintext}
        return HttpResponseRedirect(reverse("connect"))
    shown = request.session.pop(ISSUED_KEY, None)
    return _connect_page(request, orgs, issued=shown)


def _create_from_form(request: HttpRequest, orgs: list[Organisation]) -> IssuedToken:
    org = next((o for o in orgs if str(o.pk) == request.POST.get("org")), None)
    access = request.POST.get("access", "")
    scopes = list(ApiToken.ACCESS.get(access, ApiToken.ACCESS[ApiToken.READ])[0])
    name = request.POST.get("name", "").strip()[:100]
    if org is None:
        raise DomainError("Choose one of your organisations.")
    if problem := text_problem(name):
        raise DomainError(f"The name {problem}; choose another.")
    return create_token(
        org=org,
        user=_user(request),
        scopes=scopes,
        name=name,
        expires_in_days=_expiry_days(request.POST.get("expires", "")),
        via="web",
    )


def _connect_page(
    request: HttpRequest, orgs: list[Organisation], *, issued: dict[str, Any] | None, status: int = 200
) -> HttpResponse:
    user = _user(request)
    tokens = list(list_user_tokens(user=user))
    new_token = next((t for t in tokens if issued and t.pk == issued["token_id"]), None)
    plaintext = issued["plaintext"] if issued and new_token else None
    url = f"{settings.BRAIN_BASE_URL}/mcp"
    response = render(
        request,
        "brain/connect.html",
        {
            "orgs": orgs,
            "months": [(org, get_member_month(org=org, user=user)) for org in orgs],
            "active_tokens": [t for t in tokens if t.is_active],
            "inactive_tokens": [t for t in tokens if not t.is_active],
            "new_token": new_token,
            "plaintext": plaintext,
            "configs": client_configs(url, plaintext or "<your token>"),
            "mcp_url": url,
            "access_choices": [(key, label, ACCESS_HELP[key]) for key, (_scopes, label) in ApiToken.ACCESS.items()],
            "expiry_choices": EXPIRY_CHOICES,
        },
        status=status,
    )
    add_never_cache_headers(response)  # the page may carry a plaintext token: keep it out of caches and history
    return response


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
def revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    """Revoke one of one's tokens once confirmed: the page's script asks in a dialog and sends the
    confirmation; without the script, this answers with a page that asks."""
    token = ApiToken.objects.filter(pk=token_id, user=_user(request)).select_related("org").first()
    back = "account" if request.POST.get("back") == "account" else "connect"
    if token is None:
        messages.error(request, "No such token.")
    elif request.POST.get("confirm") != "yes":
        return render(request, "brain/revoke_confirm.html", {"token": token, "back": back})
    else:
        # Anyone may revoke their own token, also after leaving its organisation.
        actor = Actor(org=token.org, user=_user(request), scopes=frozenset({"read", "write"}), via="web")
        revoke_token(actor=actor, token_id=token.pk)
        messages.success(request, f"Token {token} revoked. Assistants using it are disconnected.")
    return HttpResponseRedirect(reverse(back))


# Where a token made on the account page waits for the one view that shows it.
ACCOUNT_ISSUED_KEY = "brain.account.issued"


@login_required
def account(request: HttpRequest) -> HttpResponse:
    """The signed-in person's own account: name and time zone, password, and their tokens. It has
    no id in its address: it only ever reads and changes the person who is signed in."""
    user = _user(request)
    orgs = list(list_user_organisations(user=user))
    password_form = PasswordChangeForm(user)
    status = 200
    if request.method == "POST":
        part = request.POST.get("part")
        try:
            if part == "details":
                update_account(
                    user=user,
                    first_name=request.POST.get("first_name", ""),
                    last_name=request.POST.get("last_name", ""),
                    time_zone=request.POST.get("time_zone", ""),
                )
                messages.success(request, "Your name and time zone are saved.")
                return HttpResponseRedirect(reverse("account"))
            if part == "token":
                issued = _create_from_form(request, orgs)
                request.session[ACCOUNT_ISSUED_KEY] = {"token_id": issued.token.pk, "plaintext": issued.plaintext}
                return HttpResponseRedirect(f"{reverse('account')}#tokens")
            if part != "password":
                raise DomainError("Nothing to save: send the form again from the page.")
        except DomainError as exc:
            messages.error(request, exc.message)
            status = 400
        else:
            password_form = PasswordChangeForm(user, request.POST)
            if password_form.is_valid():
                password_form.save()
                update_session_auth_hash(request, password_form.user)  # stay signed in here
                record_password_change(user=user, by_operator=False)
                messages.success(request, "Your password is changed. Other devices must log in again.")
                return HttpResponseRedirect(reverse("account"))
            status = 400
    issued = request.session.pop(ACCOUNT_ISSUED_KEY, None)
    tokens = list(list_user_tokens(user=user))
    new_token = next((t for t in tokens if issued and t.pk == issued["token_id"]), None)
    response = render(
        request,
        "brain/account.html",
        {
            "orgs": orgs,
            "chosen_zone": get_time_zone(user=user),
            "zones": time_zone_choices(),
            "password_form": password_form,
            "active_tokens": [t for t in tokens if t.is_active],
            "inactive_tokens": [t for t in tokens if not t.is_active],
            "new_token": new_token,
            "plaintext": issued["plaintext"] if issued and new_token else None,
            "access_choices": [(key, label, ACCESS_HELP[key]) for key, (_scopes, label) in ApiToken.ACCESS.items()],
            "expiry_choices": EXPIRY_CHOICES,
        },
        status=status,
    )
    add_never_cache_headers(response)  # it may carry a plaintext token
    return response


def accept_invitation(request: HttpRequest, uidb64: str, token: str) -> HttpResponse:
    """Where an invitation link leads (brain.core.invitations): set a password, then log in. A forged,
    expired or used link gets a page that says so."""
    user = invited_user(uidb64=uidb64, token=token)
    if user is None:
        return render(request, "registration/invitation_invalid.html", {"lifetime": link_lifetime()}, status=400)
    form = SetPasswordForm(user, request.POST if request.method == "POST" else None)
    if form.is_valid():
        form.save()
        messages.success(request, f"Your password is set. Log in with the username {user.get_username()}.")
        return HttpResponseRedirect(f"{reverse('login')}?username={quote(user.get_username())}")
    orgs = [m.org for m in user.memberships.select_related("org").order_by("org__name")]
    response = render(
        request,
        "registration/invitation.html",
        {"form": form, "invited": user, "orgs": orgs},
        status=400 if form.errors else 200,
    )
    add_never_cache_headers(response)
    return response


@login_required
def invitations(request: HttpRequest) -> HttpResponse:
    """The invitations to organisations waiting for the signed-in person's answer."""
    return _invitations_page(request)


def _invitations_page(request: HttpRequest, status: int = 200) -> HttpResponse:
    context = {"invitations": list_open_invitations(user=_user(request)), "lifetime": link_lifetime()}
    response = render(request, "brain/invitations.html", context, status=status)
    add_never_cache_headers(response)
    return response


@login_required
@require_POST
def answer_invitation_view(request: HttpRequest, invitation_id: str, answer: str) -> HttpResponse:
    """Accept or decline one invitation (brain.core.invitations.answer_invitation), as the signed-in person."""
    try:
        if answer not in ("accept", "decline"):
            raise DomainError("Answer accept or decline.")
        offer = answer_invitation(user=_user(request), invitation_id=invitation_id, accept=answer == "accept")
    except DomainError as exc:
        messages.error(request, exc.message)
        return _invitations_page(request, status=exc.status)
    if answer == "accept":
        messages.success(request, f"You are now a member of {offer.org.name}.")
        return HttpResponseRedirect(reverse("home"))
    messages.success(request, f"You declined the invitation to {offer.org.name}; nothing changed.")
    return HttpResponseRedirect(reverse("invitations"))
