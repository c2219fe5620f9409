from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from brain.admin import OrgScopedAdmin
from brain.faces.admin_base import SameOrganisationForm, staff_user
from brain.infra.mail import mail_is_set_up
from contacts.models import CHANNEL_LABELS, CHANNELS, Contact, HumanRequest
from contacts.selectors import get_undelivered
from contacts.services import reachable_channels, save_contact_topics, send_test_message
from contacts.transports import configured_channels
from contacts.undelivered import undelivered
from contacts.validation import ADDRESS_FIELD

# Each address field in words, said beside the box of each channel that needs it.
FIELD_NAMES = {"email": "the email address", "slack": "the Slack address", "phone": "the phone number"}
SETUP = {
    "slack": "BRAIN_SLACK_BOT_TOKEN, or a webhook URL as the address",
    "call": "the BRAIN_TWILIO_* settings",
    "whatsapp": "the BRAIN_TWILIO_* settings",
}


def channel_choices() -> list[tuple[str, str]]:
    usable = configured_channels()
    choices = []
    for channel in CHANNELS:
        label = f"{CHANNEL_LABELS[channel]}: needs {FIELD_NAMES[ADDRESS_FIELD[channel]]}"
        if channel not in usable:
            label += f" (not set up on this Brain yet: {SETUP[channel]})"
        elif channel == "email" and not mail_is_set_up():
            label += " (no mail server is set up yet: EMAIL_HOST; until then the asker gets the link to pass on)"
        choices.append((channel, label))
    return choices


class ContactForm(SameOrganisationForm):
    """Channels as boxes, each saying which address it needs; Contact.clean checks the addresses."""

    channels = forms.MultipleChoiceField(
        choices=channel_choices,
        widget=forms.CheckboxSelectMultiple,
        required=False,
        initial=["email"],
        help_text="Brain reaches this person only over the channels ticked here, each with its address below.",
    )

    class Meta:
        model = Contact
        exclude = ["topics_embedding", "topics_embedding_model"]
        help_texts = {
            "phone": "E.164: a plus sign, the country code and the number, e.g. +34600111222. "
            "Spaces and dashes are dropped."
        }


@admin.register(Contact)
class ContactAdmin(OrgScopedAdmin):
    form = ContactForm
    list_display = ["name", "org", "topics", "channels", "user", "active"]
    list_filter = ["active"]
    search_fields = ["name", "topics", "email"]
    fieldsets = [
        (None, {"fields": ["org", "name", "user", "topics", "active"]}),
        ("How to reach them", {"fields": ["channels", "email", "slack", "phone"]}),
    ]
    actions = ["send_test"]
    audit_hidden_fields = ("slack",)  # may be a webhook URL, which is a secret

    def save_model(self, request: HttpRequest, obj: Contact, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        # After the admin's transaction: the embedder may be a remote endpoint.
        transaction.on_commit(lambda: save_contact_topics(obj))

    @admin.action(description="Send a test message over each reachable channel")
    def send_test(self, request: HttpRequest, queryset: QuerySet[Contact]) -> None:
        for contact in queryset:
            channels = reachable_channels(contact, None)
            if not channels:
                self.message_user(request, f"{contact}: no channel is both set up and configured.", messages.WARNING)
            for channel in channels:
                ok, detail = send_test_message(contact=contact, channel=channel)
                level = messages.SUCCESS if ok else messages.ERROR
                self.message_user(request, f"{contact} over {channel}: {detail}", level)


@admin.register(HumanRequest)
class HumanRequestAdmin(OrgScopedAdmin):
    """Requests to people, read only. One that may not have reached its person says so in words,
    with its answer link to pass on; the provider's raw error stays in the detail's fields."""

    list_display = [
        "public_id",
        "contact",
        "requester",
        "channel",
        "status",
        "delivery",
        "attempts",
        "created_at",
        "answered_at",
    ]
    list_filter = ["status", "channel"]
    search_fields = ["public_id", "question"]
    readonly_fields = [f.name for f in HumanRequest._meta.fields]
    change_form_template = "admin/contacts/humanrequest/change_form.html"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="Delivery")
    def delivery(self, obj: HumanRequest) -> str:
        found = undelivered(obj)
        return found.short if found is not None else ""

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        row = self.get_object(request, object_id)  # within the organisations this admin may see
        extra = dict(extra_context or {})
        if row is not None:
            extra["req"], extra["undelivered"] = row, get_undelivered(user=staff_user(request), request=row)
        return super().change_view(request, object_id, form_url, extra_context=extra)
