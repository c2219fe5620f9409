from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest

from brain.admin import OrgScopedAdmin
from contacts.models import Contact, HumanRequest
from contacts.services import reachable_channels, save_contact_topics, send_test_message


@admin.register(Contact)
class ContactAdmin(OrgScopedAdmin):
    list_display = ["name", "org", "topics", "channels", "user", "active"]
    list_filter = ["active"]
    search_fields = ["name", "topics", "email"]
    exclude = ["topics_embedding", "topics_embedding_model"]
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
    list_display = ["public_id", "contact", "requester", "channel", "status", "attempts", "created_at", "answered_at"]
    list_filter = ["status", "channel"]
    search_fields = ["public_id", "question"]
    readonly_fields = [f.name for f in HumanRequest._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
