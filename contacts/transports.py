"""How Brain delivers a question to a person: email, Slack, a phone call or WhatsApp, behind one interface.

Every transport sends one :class:`Message` and returns the provider's message id. A failure raises
:class:`TransportError`, whose ``permanent`` flag tells the dispatch task whether retrying can help:
bad addresses, rejected credentials and validation errors are permanent; network errors, timeouts,
rate limits and 5xx answers are temporary. Settings are read at send time, not at construction.

None of these providers takes an idempotency key, so a timeout after the provider accepted a request
can deliver twice on retry; the dispatch task claims the request before sending to keep that rare.
"""

from __future__ import annotations

import functools
import json
import re
import smtplib
from dataclasses import dataclass
from email.headerregistry import Address
from email.utils import make_msgid
from typing import Any, Protocol
from urllib.parse import quote, urlsplit
from xml.sax.saxutils import escape as xml_escape

import httpx
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import EmailMultiAlternatives, get_connection
from django.core.validators import validate_email
from django.utils.html import format_html, linebreaks
from django.utils.safestring import mark_safe

from brain.infra import outbound
from brain.infra.mail import NOT_SET_UP, mail_is_set_up
from contacts.validation import is_e164

TIMEOUT = 10.0
# Characters XML 1.0 forbids even when escaped; a TwiML document containing one is rejected.
XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
# Slack's documented transient errors; every other {"ok": false} error means the request itself is wrong.
SLACK_TEMPORARY = {
    "ratelimited",
    "rate_limited",
    "internal_error",
    "fatal_error",
    "service_unavailable",
    "request_timeout",
}
SLACK_SECTION_LIMIT = 3000  # characters of text per section block
WHATSAPP_BODY_LIMIT = 1600
TWIML_LIMIT = 4000


@dataclass(frozen=True)
class Message:
    to_name: str
    address: str  # email address, Slack webhook URL or user/channel id, or E.164 phone number, by channel
    subject: str  # short, for email
    text: str  # the question and its context, plain text
    answer_url: str  # the signed link where the person answers
    reference: str  # our request id, for logs and idempotency


class TransportError(Exception):
    """Delivery failed. ``permanent``: retrying the same message cannot help.

    ``retry_after`` is the provider's requested wait in seconds (HTTP 429 ``Retry-After``), if it gave one.
    """

    def __init__(self, message: str, *, permanent: bool, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.permanent = permanent
        self.retry_after = retry_after

    def __reduce__(self) -> tuple[Any, ...]:
        # Celery pickles the exception it retries with; the default reduce drops keyword-only arguments.
        rebuild = functools.partial(TransportError, permanent=self.permanent, retry_after=self.retry_after)
        return (rebuild, (self.message,))


class Transport(Protocol):
    channel: str  # "email", "slack", "call" or "whatsapp"

    def send(self, message: Message) -> str:
        """Deliver the message; return the provider's message id, or "" when it gives none."""
        ...


def is_webhook_url(address: str) -> bool:
    """Whether a Slack address is an incoming-webhook URL rather than a user or channel id."""
    return address.lower().startswith(("https://", "http://"))


def _one_line(value: str) -> str:
    return " ".join(value.split())


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return max(0.0, float(response.headers.get("Retry-After", "")))
    except ValueError:
        return None  # absent, or an HTTP date: the caller's own backoff applies


def _http_error(response: httpx.Response, what: str, detail: str) -> TransportError:
    """Classify a non-success HTTP answer: 4xx (but 408 and 429) and 3xx are permanent, the rest temporary."""
    status = response.status_code
    permanent = status < 500 and status not in (408, 429)
    return TransportError(
        f"{what} answered HTTP {status}: {detail}", permanent=permanent, retry_after=_retry_after(response)
    )


def _post(url: str, what: str, **kwargs: Any) -> httpx.Response:
    """POST without following redirects; ``what`` names the endpoint in errors (URLs may carry secrets)."""
    try:
        with httpx.Client(timeout=TIMEOUT, follow_redirects=False) as client:
            return client.post(url, **kwargs)
    except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
        raise TransportError(f"{what}: unusable URL ({exc})", permanent=True) from exc
    except httpx.HTTPError as exc:
        raise TransportError(f"{what} unreachable: {type(exc).__name__}: {exc}", permanent=False) from exc


def _post_to_chosen(url: str, where: str, what: str, **kwargs: Any) -> httpx.Response:
    """POST to a URL a member entered, only where the outbound rule lets Brain connect. Every way of
    not reaching it reads the same and is temporary (the server may come back, or an operator allow
    it): the answer must not tell a refused address from a closed or a silent port."""
    try:
        pinned = outbound.pin(url)
    except ValueError as exc:
        raise TransportError(f"{what}: unusable URL ({exc})", permanent=True) from exc
    except outbound.Refused as exc:
        raise _unreachable(url, where, exc) from exc
    try:
        with httpx.Client(timeout=httpx.Timeout(TIMEOUT, connect=outbound.timeout_seconds())) as client:
            return client.post(
                pinned.url,
                headers={"Host": pinned.host_header},
                extensions={"sni_hostname": pinned.server_name},
                follow_redirects=False,
                **kwargs,
            )
    except httpx.TransportError as exc:
        raise _unreachable(url, where, exc) from exc


def _unreachable(url: str, where: str, error: Exception) -> TransportError:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    words = outbound.unreachable(where, host=parts.hostname or "", port=port, error=error)
    return TransportError(words, permanent=False)


class EmailTransport:
    """Email through Django's mail framework: a plain text body with an HTML alternative holding the link."""

    channel = "email"

    def send(self, message: Message) -> str:
        if not mail_is_set_up():
            raise TransportError(f"{NOT_SET_UP} (EMAIL_HOST is empty)", permanent=True)
        try:
            validate_email(message.address)
        except ValidationError:
            raise TransportError(f"not an email address: {message.address!r}", permanent=True) from None
        try:
            email, message_id = self._build(message)
            email.send(fail_silently=False)
        except smtplib.SMTPRecipientsRefused as exc:
            codes = [code for code, _ in exc.recipients.values()]
            raise TransportError(
                f"recipient refused: {exc.recipients}", permanent=any(c >= 500 for c in codes)
            ) from exc
        except smtplib.SMTPResponseException as exc:  # sender refused, data refused, auth failed, ...
            raise TransportError(f"SMTP {exc.smtp_code}: {exc.smtp_error!r}", permanent=exc.smtp_code >= 500) from exc
        except smtplib.SMTPServerDisconnected as exc:
            raise TransportError(f"SMTP server disconnected: {exc}", permanent=False) from exc
        except smtplib.SMTPException as exc:  # the server lacks the STARTTLS or AUTH we are configured for
            raise TransportError(f"SMTP configuration error: {exc}", permanent=True) from exc
        except OSError as exc:  # refused connection, timeout, DNS, TLS
            raise TransportError(f"SMTP server unreachable: {exc}", permanent=False) from exc
        except ValueError as exc:  # an address or header Django cannot encode
            raise TransportError(f"cannot build the email: {exc}", permanent=True) from exc
        return message_id

    def _build(self, message: Message) -> tuple[EmailMultiAlternatives, str]:
        from_email = settings.DEFAULT_FROM_EMAIL
        message_id = make_msgid(idstring="brain", domain=from_email.rpartition("@")[2].strip("> ") or "localhost")
        html = format_html(
            '{}\n<p><a href="{}">Answer this question</a></p>\n<p style="color:#666">{}</p>',
            mark_safe(linebreaks(message.text.strip(), autoescape=True)),  # noqa: S308 (linebreaks escapes the text itself)
            message.answer_url,
            message.answer_url,
        )
        email = EmailMultiAlternatives(
            subject=_one_line(message.subject) or "A question for you",
            body=f"{message.text.strip()}\n\nAnswer here: {message.answer_url}\n",
            from_email=from_email,
            to=[str(Address(display_name=_one_line(message.to_name), addr_spec=message.address))],
            headers={"Message-ID": message_id, "X-Brain-Reference": _one_line(message.reference)},
            connection=get_connection(fail_silently=False, timeout=getattr(settings, "EMAIL_TIMEOUT", None) or TIMEOUT),
        )
        email.attach_alternative(html, "text/html")
        return email, message_id


def _slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _slack_sections(text: str) -> list[dict[str, Any]]:
    """The text as mrkdwn section blocks of at most 3000 escaped characters, never splitting an entity."""
    chunks: list[str] = []
    current = ""
    for char in text.strip() or " ":
        piece = _slack_escape(char)
        if len(current) + len(piece) > SLACK_SECTION_LIMIT:
            chunks.append(current)
            current = ""
        current += piece
    chunks.append(current)
    return [{"type": "section", "text": {"type": "mrkdwn", "text": chunk}} for chunk in chunks[:48]]


def slack_payload(message: Message) -> dict[str, Any]:
    """``text`` (the notification and fallback, with the link) and ``blocks`` (the text and an Answer button)."""
    button = {
        "type": "button",
        "text": {"type": "plain_text", "text": "Answer"},
        "url": message.answer_url,
        "style": "primary",
        "action_id": "brain_answer",
    }
    return {
        "text": f"{_slack_escape(message.text.strip())}\n\n<{_slack_escape(message.answer_url)}|Answer here>",
        "blocks": [*_slack_sections(message.text), {"type": "actions", "elements": [button]}],
    }


class SlackTransport:
    """Slack, by incoming-webhook URL (no token needed) or by bot token and a user or channel id.

    The bot token is ``BRAIN_SLACK_BOT_TOKEN`` and the API base ``BRAIN_SLACK_API_URL``. A webhook gives
    no message id (returns ""); ``chat.postMessage`` returns the message's ``ts``.
    """

    channel = "slack"

    def send(self, message: Message) -> str:
        payload = slack_payload(message)
        if is_webhook_url(message.address):
            return self._send_webhook(message.address, payload)
        return self._send_api(message.address, payload)

    def _send_webhook(self, url: str, payload: dict[str, Any]) -> str:
        what = f"Slack webhook at {urlsplit(url).hostname}"  # the path is the webhook's secret
        response = _post_to_chosen(url, "The Slack webhook at", what, json=payload)
        if not response.is_success:
            raise _http_error(response, what, response.text[:200])
        return ""

    def _send_api(self, channel: str, payload: dict[str, Any]) -> str:
        token = getattr(settings, "BRAIN_SLACK_BOT_TOKEN", "")
        if not token:
            raise TransportError("Slack user/channel ids need BRAIN_SLACK_BOT_TOKEN", permanent=True)
        if not channel.strip():
            raise TransportError("no Slack user or channel id", permanent=True)
        base = getattr(settings, "BRAIN_SLACK_API_URL", "") or "https://slack.com/api"
        response = _post(
            base.rstrip("/") + "/chat.postMessage",
            "Slack chat.postMessage",
            content=json.dumps({"channel": channel, **payload}).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json; charset=utf-8"},
        )
        if not response.is_success:
            raise _http_error(response, "Slack chat.postMessage", response.text[:200])
        try:
            body = response.json()
            ok, error, ts = body.get("ok"), str(body.get("error", "")), str(body.get("ts", ""))
        except (ValueError, AttributeError):
            raise TransportError("Slack answered with something other than JSON", permanent=False) from None
        if not ok:
            raise TransportError(f"Slack error: {error or 'unknown'}", permanent=error not in SLACK_TEMPORARY)
        return ts


def twiml_for(message: Message) -> str:
    """The spoken call: the question, and that the answer link was sent by text; XML-escaped, within 4000 chars."""

    def clean(value: str) -> str:
        return xml_escape(XML_INVALID.sub("", _one_line(value)))

    opening = f"<Response><Say>Hello {clean(message.to_name)}. Brain has a question for you. "
    closing = " The link to answer was sent to you by text message. Thank you. Goodbye.</Say></Response>"
    question = clean(message.text)
    room = TWIML_LIMIT - len(opening) - len(closing)
    if len(question) > room:
        question = question[: room - 3].rsplit(" ", 1)[0] + " ..."
    return opening + question + closing


def whatsapp_body(message: Message) -> str:
    """The text and the link within WhatsApp's 1600 characters; the question is shortened, never the link."""
    link = f"\n\nAnswer here: {message.answer_url}"
    text = message.text.strip()
    room = WHATSAPP_BODY_LIMIT - len(link)
    if len(text) > room:
        text = text[: room - 1].rstrip() + "…"
    return text + link


class TwilioTransport:
    """A phone call or a WhatsApp message through Twilio's REST API (or a compatible one).

    Settings: ``BRAIN_TWILIO_API_URL``, ``BRAIN_TWILIO_ACCOUNT_SID``, ``BRAIN_TWILIO_AUTH_TOKEN`` and
    ``BRAIN_TWILIO_FROM``, an E.164 number (a ``whatsapp:`` prefix is accepted and added where needed).
    Returns the ``sid`` of the created Call or Message. The call only speaks: it does not send the link
    itself, so the dispatcher sends the link by a written channel too.
    """

    def __init__(self, channel: str) -> None:
        if channel not in ("call", "whatsapp"):
            raise ValueError(f"Twilio carries 'call' or 'whatsapp', not {channel!r}")
        self.channel = channel

    def send(self, message: Message) -> str:
        sid = getattr(settings, "BRAIN_TWILIO_ACCOUNT_SID", "")
        token = getattr(settings, "BRAIN_TWILIO_AUTH_TOKEN", "")
        sender = getattr(settings, "BRAIN_TWILIO_FROM", "").removeprefix("whatsapp:")
        to = message.address.strip().removeprefix("whatsapp:")
        if not (sid and token and sender):
            raise TransportError("Twilio is not configured (BRAIN_TWILIO_ACCOUNT_SID/AUTH_TOKEN/FROM)", permanent=True)
        if not is_e164(to):
            raise TransportError(f"not an E.164 phone number: {message.address!r}", permanent=True)
        if not is_e164(sender):
            raise TransportError(f"BRAIN_TWILIO_FROM is not an E.164 phone number: {sender!r}", permanent=True)
        base = getattr(settings, "BRAIN_TWILIO_API_URL", "") or "https://api.twilio.com"
        account = f"{base.rstrip('/')}/2010-04-01/Accounts/{quote(sid, safe='')}"
        if self.channel == "whatsapp":
            url, form = f"{account}/Messages.json", {"To": f"whatsapp:{to}", "From": f"whatsapp:{sender}"}
            form["Body"] = whatsapp_body(message)
        else:
            url, form = f"{account}/Calls.json", {"To": to, "From": sender, "Twiml": twiml_for(message)}
        what = f"Twilio {url.rsplit('/', 1)[1]}"
        response = _post(url, what, data=form, auth=(sid, token))
        if not response.is_success:
            raise _http_error(response, what, _twilio_detail(response))
        try:
            return str(response.json().get("sid", ""))
        except (ValueError, AttributeError):
            return ""  # created all the same; raising would make a retry call twice


def _twilio_detail(response: httpx.Response) -> str:
    try:
        body = response.json()
        return f"error {body.get('code')}: {body.get('message')}"
    except (ValueError, AttributeError):
        return response.text[:200]


def transport_for(channel: str) -> Transport:
    """The transport for a channel name; ``ValueError`` for an unknown channel."""
    if channel == "email":
        return EmailTransport()
    if channel == "slack":
        return SlackTransport()
    if channel in ("call", "whatsapp"):
        return TwilioTransport(channel)
    raise ValueError(f"unknown channel {channel!r}; expected email, slack, call or whatsapp")


def configured_channels() -> set[str]:
    """The channels the settings make usable.

    Email always (Django's mail settings): without a mail server a request by email is kept, not
    sent, and its answer link is given to the asker to pass on (``brain.infra.mail``). Slack when
    ``BRAIN_SLACK_BOT_TOKEN`` is set; note that contacts whose Slack address is an incoming-webhook
    URL work without a token (see :func:`is_webhook_url`), so a caller checking one contact should
    accept ``slack`` for a webhook address even when it is missing here. Call and WhatsApp when the
    Twilio account sid, auth token and from number are all set.
    """
    channels = {"email"}
    if getattr(settings, "BRAIN_SLACK_BOT_TOKEN", ""):
        channels.add("slack")
    twilio = ("BRAIN_TWILIO_ACCOUNT_SID", "BRAIN_TWILIO_AUTH_TOKEN", "BRAIN_TWILIO_FROM")
    if all(getattr(settings, name, "") for name in twilio):
        channels |= {"call", "whatsapp"}
    return channels
