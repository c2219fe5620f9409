"""Pages: a contact's answer form (signed link, no login), a user's own requests, and the questions
put to them, answered in place."""

from __future__ import annotations

from typing import cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from brain.core.errors import DomainError
from brain.core.services import actor_for_user
from brain.infra.ids import is_random_id
from brain.infra.mail import mail_is_set_up
from contacts.models import HumanRequest
from contacts.selectors import get_question_for, get_undelivered, list_questions_for
from contacts.services import record_answer, request_from_token, save_answer_to_memory


def answer(request: HttpRequest, token: str) -> HttpResponse:
    try:
        human_request = request_from_token(token)
    except DomainError as exc:
        return render(request, "contacts/answer_invalid.html", {"reason": exc.message}, status=400)
    error = ""
    if request.method == "POST":
        try:
            record_answer(request=human_request, answer=request.POST.get("answer", ""))
            return render(request, "contacts/answer_thanks.html", _thanks(human_request))
        except DomainError as exc:
            error = exc.message
    return render(request, "contacts/answer.html", {"req": human_request, "error": error}, status=400 if error else 200)


def _thanks(human_request: HumanRequest) -> dict[str, object]:
    return {"req": human_request, "mailed": bool(human_request.requester.email) and mail_is_set_up()}


def _user(request: HttpRequest) -> User:
    return cast(User, request.user)


@login_required
def my_requests(request: HttpRequest) -> HttpResponse:
    return _requests_page(request)


def _requests_page(
    request: HttpRequest, *, answering: str = "", error: str = "", draft: str = "", status: int = 200
) -> HttpResponse:
    user = _user(request)
    rows = HumanRequest.objects.filter(requester=user).select_related("contact", "org")[:200]
    context = {
        "requests": [(row, get_undelivered(user=user, request=row)) for row in rows],
        "questions": list(list_questions_for(user=user)[:50]),
        "answering": answering,
        "error": error,
        "draft": draft,
    }
    return render(request, "contacts/my_requests.html", context, status=status)


def _own_request(request: HttpRequest, public_id: str) -> HumanRequest:
    rows = HumanRequest.objects.filter(requester=_user(request), public_id=public_id).select_related("contact", "org")
    # A URL can carry anything, NUL included: only what has the shape of a request id is looked up.
    row = rows.first() if is_random_id(public_id, "req") else None
    if row is None:
        raise Http404("No such request of yours.")
    return row


@login_required
def request_detail(request: HttpRequest, public_id: str) -> HttpResponse:
    row = _own_request(request, public_id)
    context = {"req": row, "undelivered": get_undelivered(user=_user(request), request=row)}
    return render(request, "contacts/request_detail.html", context)


@login_required
@require_POST
def answer_here(request: HttpRequest, public_id: str) -> HttpResponse:
    """The person asked answers on their requests page, signed in: the answer link's service."""
    try:
        question = get_question_for(user=_user(request), public_id=public_id)
    except DomainError:
        raise Http404("No such question for you.") from None
    text = request.POST.get("answer", "")
    try:
        record_answer(request=question, answer=text, by=_user(request))
    except DomainError as exc:
        return _requests_page(request, answering=public_id, error=exc.message, draft=text, status=400)
    who = question.requester.get_full_name() or question.requester.get_username()
    told = "they were told by email" if _thanks(question)["mailed"] else "it shows on their requests page"
    messages.success(request, f"Your answer was sent to {who}: {told}.")
    return HttpResponseRedirect(reverse("my-requests"))


@login_required
@require_POST
def save_to_memory(request: HttpRequest, public_id: str) -> HttpResponseRedirect:
    row = _own_request(request, public_id)
    try:
        save_answer_to_memory(actor=actor_for_user(org=row.org, user=_user(request), via="web"), request_id=public_id)
        messages.success(request, "The answer was saved into memory; it becomes searchable within minutes.")
    except DomainError as exc:
        messages.error(request, exc.message)
    return HttpResponseRedirect(reverse("request-detail", args=[public_id]))
