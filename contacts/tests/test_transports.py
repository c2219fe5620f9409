"""Transports against real protocols on loopback: an aiosmtpd SMTP server, and HTTP servers answering as Slack
and Twilio do. No database needed."""

import base64
import email
import json
import pickle
import socket
import threading
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from email import policy
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest
from aiosmtpd.controller import Controller

from brain.infra import outbound
from contacts.transports import (
    EmailTransport,
    Message,
    SlackTransport,
    TransportError,
    TwilioTransport,
    configured_channels,
    transport_for,
    twiml_for,
)

ANSWER_URL = "https://brain.example.com/answer/r42?sig=abc&exp=9"
QUESTION = 'Which discount did we give <Acme & Co> in "Q3"?\n\nPriya said 12%.\nSam thinks 15%.'


def make_message(address: str, **changes: str) -> Message:
    values = {
        "to_name": "Zoë O'Brien, CFO",
        "address": address,
        "subject": "A question\nabout Acme",
        "text": QUESTION,
        "answer_url": ANSWER_URL,
        "reference": "req-42",
    }
    return Message(**{**values, **changes})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- Email over a real SMTP server -----------------------------------------------------------------------


class Mailbox:
    """An aiosmtpd handler that stores messages; refuses refused@ with 550 and busy@ with 450."""

    def __init__(self) -> None:
        self.envelopes: list[tuple[str, list[str], bytes]] = []

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # noqa: N802
        if address.startswith("refused@"):
            return "550 5.1.1 No such user here"
        if address.startswith("busy@"):
            return "450 4.2.1 Mailbox busy, try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):  # noqa: N802
        self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.original_content))
        return "250 Message accepted for delivery"


@pytest.fixture
def mailbox(settings) -> Iterator[Mailbox]:
    handler = Mailbox()
    controller = Controller(handler, hostname="127.0.0.1", port=free_port())
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", controller.port
    settings.DEFAULT_FROM_EMAIL = "Brain <brain@acme.example>"
    yield handler
    controller.stop()


def content_of(received: EmailMessage, subtype: str) -> str:
    """The text of the message's part of this subtype (plain or html)."""
    part = received.get_body((subtype,))
    assert part is not None
    return part.get_content()


def test_email_delivers_the_question_and_the_answer_link_over_smtp(mailbox):
    message_id = EmailTransport().send(make_message("zoe@acme.example"))

    [(mail_from, rcpt_tos, raw)] = mailbox.envelopes
    assert mail_from == "brain@acme.example"
    assert rcpt_tos == ["zoe@acme.example"]
    received = email.message_from_bytes(raw, policy=policy.default)
    assert received["Message-ID"] == message_id
    assert message_id.endswith("@acme.example>")
    assert received["Subject"] == "A question about Acme"
    assert received["To"].addresses[0].display_name == "Zoë O'Brien, CFO"
    assert received["X-Brain-Reference"] == "req-42"
    plain = content_of(received, "plain")
    assert QUESTION in plain.replace("\r\n", "\n")
    assert f"Answer here: {ANSWER_URL}" in plain
    html = content_of(received, "html")
    assert "&lt;Acme &amp; Co&gt;" in html
    assert "<Acme" not in html
    assert 'href="https://brain.example.com/answer/r42?sig=abc&amp;exp=9"' in html


def test_a_recipient_refused_with_550_is_a_permanent_error(mailbox):
    with pytest.raises(TransportError, match="550") as caught:
        EmailTransport().send(make_message("refused@acme.example"))
    assert caught.value.permanent
    assert mailbox.envelopes == []


def test_a_recipient_refused_with_450_is_a_temporary_error(mailbox):
    with pytest.raises(TransportError, match="450") as caught:
        EmailTransport().send(make_message("busy@acme.example"))
    assert not caught.value.permanent


def test_an_invalid_email_address_is_refused_before_connecting(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", free_port()  # nothing listens: connecting would fail
    with pytest.raises(TransportError, match="not an email address") as caught:
        EmailTransport().send(make_message("zoe at acme"))
    assert caught.value.permanent


def test_a_closed_smtp_port_is_a_temporary_error(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", free_port()
    with pytest.raises(TransportError, match="unreachable") as caught:
        EmailTransport().send(make_message("zoe@acme.example"))
    assert not caught.value.permanent


def test_an_smtp_server_that_never_greets_times_out_as_a_temporary_error(settings):
    silent = socket.create_server(("127.0.0.1", 0))  # the kernel accepts; nobody ever says 220
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", silent.getsockname()[1], 0.5
    try:
        with pytest.raises(TransportError) as caught:
            EmailTransport().send(make_message("zoe@acme.example"))
    finally:
        silent.close()
    assert not caught.value.permanent


# --- A loopback HTTP server that records requests and answers as told -------------------------------------

Reply = tuple[int, dict[str, str], bytes]


class Stub:
    def __init__(self, url: str) -> None:
        self.url = url
        self.requests: list[dict] = []
        self.respond: Callable[[dict], Reply] = lambda request: (200, {}, b"ok")


class StubHandler(BaseHTTPRequestHandler):
    stub: Stub

    def do_POST(self):  # noqa: N802
        request = {
            "path": self.path,
            "headers": dict(self.headers),
            "body": self.rfile.read(int(self.headers.get("Content-Length", 0))),
        }
        self.server.stub.requests.append(request)  # type: ignore[attr-defined]
        status, headers, body = self.server.stub.respond(request)  # type: ignore[attr-defined]
        self.send_response(status)
        for name, value in {"Content-Length": str(len(body)), **headers}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def stub() -> Iterator[Stub]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), StubHandler)
    server.stub = Stub(f"http://127.0.0.1:{server.server_port}")  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield server.stub  # type: ignore[attr-defined]
    server.shutdown()
    server.server_close()


def as_json(status: int, payload: object, **headers: str) -> Reply:
    return status, {"Content-Type": "application/json", **headers}, json.dumps(payload).encode()


# --- Slack ---------------------------------------------------------------------------------------------

WEBHOOK_ANSWERS = {
    "good": (200, {}, b"ok"),
    "bad-payload": (400, {}, b"invalid_payload"),
    "revoked": (403, {}, b"invalid_token"),
    "gone": (404, {}, b"no_service"),
    "limited": (429, {"Retry-After": "3"}, b"rate_limited"),
    "broken": (500, {}, b"rollup_error"),
}


def slack_webhook(request: dict) -> Reply:
    return WEBHOOK_ANSWERS[request["path"].rsplit("/", 1)[1]]


def slack_api(request: dict) -> Reply:
    if request["headers"].get("Authorization") != "Bearer xoxb-right":
        return as_json(200, {"ok": False, "error": "invalid_auth"})
    channel = json.loads(request["body"])["channel"]
    if channel == "C_LIMITED":
        return as_json(429, {"ok": False, "error": "ratelimited"}, **{"Retry-After": "7"})
    if channel == "C_DOWN":
        return 500, {}, b"<html>Internal Server Error</html>"
    if channel.startswith("C_ERR_"):
        return as_json(200, {"ok": False, "error": channel.removeprefix("C_ERR_")})
    return as_json(200, {"ok": True, "channel": channel, "ts": "1700000000.000100"})


@pytest.fixture
def slack(stub, settings) -> Stub:
    settings.BRAIN_SLACK_API_URL = f"{stub.url}/api/"
    settings.BRAIN_SLACK_BOT_TOKEN = "xoxb-right"
    stub.respond = lambda request: (slack_webhook if "/services/" in request["path"] else slack_api)(request)
    return stub


def test_a_slack_webhook_gets_the_text_and_an_answer_button_without_the_bot_token(slack):
    assert SlackTransport().send(make_message(f"{slack.url}/services/T1/B2/good")) == ""

    [request] = slack.requests
    assert request["path"] == "/services/T1/B2/good"
    assert "Authorization" not in request["headers"]
    body = json.loads(request["body"])
    assert "&lt;Acme &amp; Co&gt;" in body["text"]
    assert "/answer/r42?sig=abc&amp;exp=9" in body["text"]
    assert body["blocks"][0]["text"]["text"].startswith("Which discount did we give &lt;Acme &amp; Co&gt;")
    assert body["blocks"][-1]["elements"][0]["url"] == ANSWER_URL


@pytest.mark.parametrize(
    ("hook", "permanent"),
    [("bad-payload", True), ("revoked", True), ("gone", True), ("limited", False), ("broken", False)],
)
def test_slack_webhook_failures_are_classified_without_revealing_the_secret_path(slack, hook, permanent):
    with pytest.raises(TransportError) as caught:
        SlackTransport().send(make_message(f"{slack.url}/services/T1/B2/{hook}"))
    assert caught.value.permanent is permanent
    assert "/services/" not in str(caught.value)
    assert WEBHOOK_ANSWERS[hook][2].decode() in str(caught.value)


def webhook_failure(url: str) -> TransportError:
    with pytest.raises(TransportError) as caught:
        SlackTransport().send(make_message(url))
    return caught.value


def test_a_webhook_at_an_internal_address_is_refused_in_the_words_of_a_closed_port(slack, settings):
    port = free_port()
    closed = webhook_failure(f"http://127.0.0.1:{port}/services/T1/B2/good")  # loopback is allowed in the suite
    settings.BRAIN_OUTBOUND_ALLOW = []
    stand_in = slack.url.removeprefix("http://")
    for url, where in [
        (f"{slack.url}/services/T1/B2/good", stand_in),
        ("https://169.254.169.254/services/T1/B2/good", "169.254.169.254:443"),
        ("http://localhost:8080/services/T1/B2/good", "localhost:8080"),
    ]:
        refused = webhook_failure(url)
        assert refused.permanent is closed.permanent is False
        assert refused.message.replace(where, "HOST") == closed.message.replace(f"127.0.0.1:{port}", "HOST")
    assert slack.requests == []


def test_a_webhook_is_posted_to_the_address_that_was_checked_under_its_own_name(slack, monkeypatch):
    answers = iter([["127.0.0.1"], ["10.20.30.40"]])  # the stand-in's address first, an internal one after
    monkeypatch.setattr(outbound, "resolve", lambda host, port: next(answers))
    port = slack.url.rsplit(":", 1)[1]
    assert SlackTransport().send(make_message(f"http://hooks.example.com:{port}/services/T1/B2/good")) == ""
    [request] = slack.requests
    assert request["headers"]["Host"] == f"hooks.example.com:{port}"
    assert next(answers) == ["10.20.30.40"]  # asked once


def test_the_slack_bot_posts_to_chat_post_message_and_returns_the_ts(slack):
    assert SlackTransport().send(make_message("U0ZOE")) == "1700000000.000100"

    [request] = slack.requests
    assert request["path"] == "/api/chat.postMessage"
    assert request["headers"]["Authorization"] == "Bearer xoxb-right"
    assert request["headers"]["Content-Type"] == "application/json; charset=utf-8"
    body = json.loads(request["body"])
    assert body["channel"] == "U0ZOE"
    assert "Priya said 12%." in body["text"]
    assert {
        "type": "button",
        "text": {"type": "plain_text", "text": "Answer"},
        "url": ANSWER_URL,
        "style": "primary",
        "action_id": "brain_answer",
    } in body["blocks"][-1]["elements"]


@pytest.mark.parametrize("error", ["channel_not_found", "not_in_channel", "account_inactive", "msg_too_long"])
def test_slack_errors_about_the_request_are_permanent(slack, error):
    with pytest.raises(TransportError, match=error) as caught:
        SlackTransport().send(make_message(f"C_ERR_{error}"))
    assert caught.value.permanent


def test_a_rejected_bot_token_is_permanent(slack, settings):
    settings.BRAIN_SLACK_BOT_TOKEN = "xoxb-revoked"
    with pytest.raises(TransportError, match="invalid_auth") as caught:
        SlackTransport().send(make_message("U0ZOE"))
    assert caught.value.permanent


def test_slack_rate_limits_and_outages_are_temporary(slack):
    with pytest.raises(TransportError) as limited:
        SlackTransport().send(make_message("C_LIMITED"))
    assert not limited.value.permanent
    assert limited.value.retry_after == 7
    with pytest.raises(TransportError) as said_ratelimited:
        SlackTransport().send(make_message("C_ERR_ratelimited"))
    assert not said_ratelimited.value.permanent
    with pytest.raises(TransportError, match="500") as down:
        SlackTransport().send(make_message("C_DOWN"))
    assert not down.value.permanent
    assert down.value.retry_after is None


def test_an_unreachable_slack_is_temporary(settings):
    settings.BRAIN_SLACK_BOT_TOKEN = "xoxb-right"
    settings.BRAIN_SLACK_API_URL = f"http://127.0.0.1:{free_port()}/api"
    with pytest.raises(TransportError, match="unreachable") as caught:
        SlackTransport().send(make_message("U0ZOE"))
    assert not caught.value.permanent


def test_a_slack_id_without_a_bot_token_is_refused_before_any_request(slack, settings):
    settings.BRAIN_SLACK_BOT_TOKEN = ""
    with pytest.raises(TransportError, match="BRAIN_SLACK_BOT_TOKEN") as caught:
        SlackTransport().send(make_message("U0ZOE"))
    assert caught.value.permanent
    assert slack.requests == []


def test_a_long_slack_question_is_split_into_sections_slack_accepts(slack):
    SlackTransport().send(make_message("U0ZOE", text="&" * 1000 + "x" * 4000))
    blocks = json.loads(slack.requests[0]["body"])["blocks"]
    sections = [block["text"]["text"] for block in blocks if block["type"] == "section"]
    assert all(len(text) <= 3000 for text in sections)
    assert "".join(sections) == "&amp;" * 1000 + "x" * 4000


# --- Twilio ---------------------------------------------------------------------------------------------


def twilio_api(request: dict) -> Reply:
    expected = "Basic " + base64.b64encode(b"AC123:tw-secret").decode()
    if request["headers"].get("Authorization") != expected:
        return as_json(401, {"code": 20003, "message": "Authenticate", "status": 401})
    form = {key: values[0] for key, values in parse_qs(request["body"].decode()).items()}
    number = form["To"].removeprefix("whatsapp:")
    if number == "+15005550001":
        return as_json(400, {"code": 21211, "message": "The 'To' number is not a valid phone number.", "status": 400})
    if number == "+15005550009":
        return as_json(503, {"code": 20500, "message": "Service Unavailable", "status": 503})
    if number == "+15005550429":
        return as_json(429, {"code": 20429, "message": "Too Many Requests", "status": 429})
    prefix = "SM" if request["path"].endswith("/Messages.json") else "CA"
    return as_json(201, {"sid": f"{prefix}0123456789abcdef", "status": "queued"})


@pytest.fixture
def twilio(stub, settings) -> Stub:
    settings.BRAIN_TWILIO_API_URL = stub.url
    settings.BRAIN_TWILIO_ACCOUNT_SID = "AC123"
    settings.BRAIN_TWILIO_AUTH_TOKEN = "tw-secret"
    settings.BRAIN_TWILIO_FROM = "+14155550100"
    stub.respond = twilio_api
    return stub


def form_of(request: dict) -> dict[str, str]:
    assert request["headers"]["Content-Type"] == "application/x-www-form-urlencoded"
    return {key: values[0] for key, values in parse_qs(request["body"].decode()).items()}


def said(twiml: str) -> str:
    """The text of the TwiML's <Say>; parsing it shows the escaping is valid XML."""
    say = ET.fromstring(twiml).find("Say")  # noqa: S314 (XML that Brain itself wrote)
    assert say is not None
    assert say.text is not None
    return say.text


@pytest.mark.parametrize("sender", ["+14155550100", "whatsapp:+14155550100"])
def test_whatsapp_posts_a_message_with_the_question_and_the_link(twilio, settings, sender):
    settings.BRAIN_TWILIO_FROM = sender
    assert TwilioTransport("whatsapp").send(make_message("+447700900123")) == "SM0123456789abcdef"

    [request] = twilio.requests
    assert request["path"] == "/2010-04-01/Accounts/AC123/Messages.json"
    form = form_of(request)
    assert form["To"] == "whatsapp:+447700900123"
    assert form["From"] == "whatsapp:+14155550100"
    assert form["Body"] == f"{QUESTION}\n\nAnswer here: {ANSWER_URL}"


def test_a_call_speaks_the_question_in_escaped_twiml_and_says_the_link_was_texted(twilio):
    assert TwilioTransport("call").send(make_message("+447700900123")) == "CA0123456789abcdef"

    [request] = twilio.requests
    assert request["path"] == "/2010-04-01/Accounts/AC123/Calls.json"
    form = form_of(request)
    assert form["To"] == "+447700900123"
    assert form["From"] == "+14155550100"
    assert "&lt;Acme &amp; Co&gt;" in form["Twiml"]
    spoken = said(form["Twiml"])  # parses: the escaping is valid XML
    assert 'Which discount did we give <Acme & Co> in "Q3"? Priya said 12%. Sam thinks 15%.' in spoken
    assert "Zoë O'Brien, CFO" in spoken
    assert "sent to you by text message" in spoken
    assert ANSWER_URL not in spoken


def test_long_or_odd_questions_still_make_valid_twiml_within_twilios_limit():
    twiml = twiml_for(make_message("+447700900123", text="Bell\x07 & whistle " * 500))
    assert len(twiml) <= 4000
    assert said(twiml).endswith("Goodbye.")


@pytest.mark.parametrize("channel", ["call", "whatsapp"])
@pytest.mark.parametrize("number", ["", "07700 900123", "+44 7700 900123", "+0123456", "tel:+447700900123"])
def test_a_number_that_is_not_e164_is_refused_before_any_request(twilio, channel, number):
    with pytest.raises(TransportError, match="E.164") as caught:
        TwilioTransport(channel).send(make_message(number))
    assert caught.value.permanent
    assert twilio.requests == []


def test_twilio_4xx_errors_are_permanent_and_name_the_code(twilio, settings):
    with pytest.raises(TransportError, match="21211") as invalid:
        TwilioTransport("whatsapp").send(make_message("+15005550001"))
    assert invalid.value.permanent
    settings.BRAIN_TWILIO_AUTH_TOKEN = "wrong"
    with pytest.raises(TransportError, match="20003") as unauthorised:
        TwilioTransport("call").send(make_message("+447700900123"))
    assert unauthorised.value.permanent


@pytest.mark.parametrize("number", ["+15005550009", "+15005550429"])
def test_twilio_outages_and_rate_limits_are_temporary(twilio, number):
    with pytest.raises(TransportError) as caught:
        TwilioTransport("call").send(make_message(number))
    assert not caught.value.permanent


def test_an_unconfigured_twilio_is_a_permanent_error(twilio, settings):
    settings.BRAIN_TWILIO_AUTH_TOKEN = ""
    with pytest.raises(TransportError, match="not configured") as caught:
        TwilioTransport("whatsapp").send(make_message("+447700900123"))
    assert caught.value.permanent
    assert twilio.requests == []


# --- Choosing a transport ------------------------------------------------------------------------------


def test_transport_for_knows_every_channel_and_refuses_others():
    assert {channel: transport_for(channel).channel for channel in ("email", "slack", "call", "whatsapp")} == {
        "email": "email",
        "slack": "slack",
        "call": "call",
        "whatsapp": "whatsapp",
    }
    with pytest.raises(ValueError, match="sms"):
        transport_for("sms")


def test_configured_channels_follow_the_settings(settings):
    settings.BRAIN_SLACK_BOT_TOKEN = ""
    settings.BRAIN_TWILIO_ACCOUNT_SID, settings.BRAIN_TWILIO_AUTH_TOKEN = "AC123", "tw-secret"
    settings.BRAIN_TWILIO_FROM = ""
    assert configured_channels() == {"email"}

    settings.BRAIN_SLACK_BOT_TOKEN = "xoxb-right"
    settings.BRAIN_TWILIO_FROM = "+14155550100"
    assert configured_channels() == {"email", "slack", "call", "whatsapp"}


def test_configured_channels_without_any_brain_settings_is_email_only(settings):
    for name in ("BRAIN_SLACK_BOT_TOKEN", "BRAIN_TWILIO_ACCOUNT_SID", "BRAIN_TWILIO_AUTH_TOKEN", "BRAIN_TWILIO_FROM"):
        if hasattr(settings, name):
            delattr(settings, name)
    assert configured_channels() == {"email"}


def test_a_transport_error_survives_pickling_for_celery_retries():
    pickled = pickle.dumps(TransportError("Slack error: ratelimited", permanent=False, retry_after=7))
    error = pickle.loads(pickled)  # noqa: S301 (the test's own error, as Celery carries it)
    assert (str(error), error.permanent, error.retry_after) == ("Slack error: ratelimited", False, 7)
