"""What Brain's pages share: the menu's links, marked where the reader is, and times shown in the
reader's or the organisation's zone with the zone named (``brain.faces.times``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import template
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from brain.faces import times, web
from brain.infra.mail import mail_is_set_up
from brain.models import Organisation

register = template.Library()


@register.filter
def local_time(moment: datetime | None, org: Organisation | None) -> SafeString | str:
    """``{{ row.created_at|local_time:org }}``: a ``<time>`` element in the reader's chosen zone or
    the organisation's, labelled."""
    if not moment:
        return ""
    return format_html('<time datetime="{}">{}</time>', moment.isoformat(), times.page_time(moment, org))


@register.simple_tag(takes_context=True)
def menu_link(context: dict[str, Any], url_name: str, label: str, *also: str) -> SafeString:
    """A menu link, with ``aria-current="page"`` on the page it leads to and the pages under it
    (``also``: more path prefixes that belong to it, such as a search's results)."""
    href = reverse(url_name)
    request = context.get("request")
    path = request.path if request is not None else ""
    here = path == href or any(path.startswith(prefix) for prefix in (href, *also) if prefix != "/")
    if here:
        return format_html('<a href="{}" aria-current="page">{}</a>', href, label)
    return format_html('<a href="{}">{}</a>', href, label)


@register.simple_tag
def mail_set_up() -> bool:
    """``{% mail_set_up as mailed %}``: whether Brain can send mail (``brain.infra.mail``), for a page that
    offers to mail something to say when it cannot."""
    return mail_is_set_up()


@register.filter
def undo_of(message: Any) -> tuple[str, str] | None:
    """``{% with undo=message|undo_of %}``: the (path, label) of a notice with an Undo button
    (``brain.faces.web.notice_with_undo``), or None."""
    return web.undo_of(getattr(message, "extra_tags", "") or "")
