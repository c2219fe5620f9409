"""Syncing mail over IMAP against a real dovecot on loopback: messages in with their threads,
dates, senders and attachments; nothing twice; new mail in and expunged mail withdrawn; a sync
stopped mid-folder goes on from its last page; a refused password in words and no retry; a
mailbox only into a restricted category; a rebuilt folder (new UIDVALIDITY) read again without
duplicates. A server is reached only where the outbound address rule allows (brain.infra.outbound), and
every way of not reaching one reads the same."""

from __future__ import annotations

import imaplib
import socket
import ssl
import time
from datetime import UTC, datetime
from email.message import EmailMessage

import pytest
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from brain.core.errors import InvalidArgument
from brain.infra import outbound
from brain.models import Category
from connectors import imap as imap_kind
from connectors import sync
from connectors.imap import _expand, _fetched, _quoted, _ranges
from connectors.models import Connection, SyncedItem
from connectors.sealing import unseal
from connectors.tests.imap_server import MailServer, _free_port, imap_server, pdf_saying
from memory.documents.ingestion import ingest_document
from memory.models import Document
from memory.search.passages import search_chunks

pytestmark = pytest.mark.django_db


@pytest.fixture
def server():
    with imap_server() as running:
        yield running


@pytest.fixture
def mailbox_category(admin_actor):
    """A restricted category whose group the admin is in: the mailbox's readers."""
    category = Category.objects.create(org=admin_actor.org, slug="sam-mail", name="Sam's mail", restricted=True)
    readers = Group.objects.create(name=f"sam mail readers {admin_actor.org.pk}")
    category.groups.add(readers)
    admin_actor.user.groups.add(readers)
    cache.clear()  # the categories a person reads are worked out once per request
    return category


def connect(actor, server: MailServer, category, *, password=None, folders="INBOX", port=None, name="Sam's mail"):
    return sync.add_connection(
        actor=actor,
        kind="imap",
        name=name,
        category=category,
        credentials={
            "host": "127.0.0.1",
            "port": str(port or server.port),
            "username": server.username,
            "password": password or server.password,
        },
        options={"folders": folders, "tls": "plain"},
    )


def message(
    subject,
    *,
    sender="Priya Shah <priya@example.com>",
    date="Mon, 03 Nov 2025 09:15:00 +0100",
    message_id=None,
    reply_to=(),
    body="",
    html="",
    attachments=(),
):
    mail = EmailMessage()
    mail["From"] = sender
    mail["To"] = "Sam Okafor <sam@example.com>, ops@example.com"
    mail["Subject"] = subject
    if date:
        mail["Date"] = date
    if message_id:
        mail["Message-ID"] = message_id
    if reply_to:
        mail["In-Reply-To"] = reply_to[-1]
        mail["References"] = " ".join(reply_to)
    if html:
        mail.set_content(html, subtype="html")
    else:
        mail.set_content(body or f"The text of {subject}.")
    for name, data, kind in attachments:
        maintype, subtype = kind.split("/")
        mail.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    return mail


def documents(connection):
    return Document.objects.filter(org=connection.org, source_kind="connector")


def test_a_first_sync_brings_in_messages_with_threads_dates_senders_and_attachments(
    server, admin_actor, mailbox_category
):
    attached = [("quote.pdf", pdf_saying("Zephyrine freight costs 4200 euros"), "application/pdf"),
                ("photo.png", b"\x89PNG not really", "image/png")]  # fmt: skip
    for mail in (
        message("Launch date", message_id="<plan@example.com>", body="Shall we move the launch to Thursday?"),
        message(
            "Re: Launch date",
            sender="Sam Okafor <sam@example.com>",
            date="Mon, 03 Nov 2025 10:02:00 +0100",
            message_id="<reply@example.com>",
            reply_to=("<plan@example.com>",),
            html="<html><body><p>Thursday <b>works</b> for me.</p></body></html>",
        ),
        message(
            "Freight quote",
            message_id="<quote@example.com>",
            date="Tue, 04 Nov 2025 16:40:00 -0500",
            body="The quote is attached.",
            attachments=attached,
        ),
    ):
        server.append(mail)
    connection = connect(admin_actor, server, mailbox_category)
    outcome = sync.sync_connection(connection.pk)
    assert (outcome.state, outcome.saved, outcome.message) == ("synced", 3, "")

    plan = documents(connection).get(title="Launch date")
    reply = documents(connection).get(title="Re: Launch date")
    quote = documents(connection).get(title="Freight quote")
    assert plan.occurred_at == datetime(2025, 11, 3, 8, 15, tzinfo=UTC)  # the Date header, not the sync's time
    assert quote.occurred_at == datetime(2025, 11, 4, 21, 40, tzinfo=UTC)
    assert (plan.speaker, reply.speaker) == ("Priya Shah", "Sam Okafor")
    assert plan.conversation == reply.conversation == "mail:<plan@example.com>"  # the thread reads together
    assert reply.metadata["thread"] == "mail:<plan@example.com>"
    assert quote.conversation == "mail:<quote@example.com>"
    assert plan.metadata["to"] == ["Sam Okafor <sam@example.com>", "ops@example.com"]
    assert plan.metadata["from"] == "Priya Shah <priya@example.com>"
    assert plan.metadata["message_id"] == "<plan@example.com>"
    assert plan.content.startswith("From: Priya Shah <priya@example.com>\nTo: ")
    assert "Shall we move the launch to Thursday?" in plan.content
    assert "Thursday works for me." in reply.content  # HTML read as the uploaded .html/.eml readers do
    assert "<b>" not in reply.content
    assert plan.category == mailbox_category
    assert plan.source_url.startswith(f"imap://127.0.0.1/INBOX;UIDVALIDITY={server.uidvalidity('INBOX')}/;UID=")

    assert "## Attached: quote.pdf\n\nZephyrine freight costs 4200 euros" in quote.content
    assert quote.metadata["attachments"] == ["quote.pdf", "photo.png"]
    assert quote.metadata["not_read"] == ["photo.png: Brain does not read this kind of file"]
    assert ingest_document(document_id=quote.pk) == "ready"
    hits = search_chunks(actor=admin_actor, query="Zephyrine freight", mode="keyword").hits
    assert [hit.title for hit in hits] == ["Freight quote"]

    connection.refresh_from_db()
    assert connection.items == 3
    assert connection.cursor["INBOX"]["last_uid"] == 3
    assert connection.cursor["INBOX"]["seen"] == "1:3"


def test_new_mail_comes_in_once_and_expunged_mail_is_withdrawn(server, admin_actor, mailbox_category):
    first = server.append(message("Standup notes", message_id="<standup@example.com>"))
    server.append(message("Invoice 118", message_id="<invoice@example.com>"))
    connection = connect(admin_actor, server, mailbox_category)
    assert sync.sync_connection(connection.pk).saved == 2

    again = sync.sync_connection(connection.pk)
    assert (again.state, again.saved, again.withdrawn) == ("synced", 0, 0)  # nothing new: no new documents
    assert documents(connection).count() == 2

    server.append(message("Holiday rota", message_id=None, date=""))
    newer = sync.sync_connection(connection.pk)
    assert (newer.saved, newer.withdrawn) == (1, 0)
    rota = documents(connection).get(title="Holiday rota")
    assert rota.occurred_at is None  # no Date header: no moment made up from the sync

    server.expunge([first])
    gone = sync.sync_connection(connection.pk)
    assert (gone.saved, gone.withdrawn) == (0, 1)
    assert not documents(connection).filter(title="Standup notes").exists()
    assert SyncedItem.objects.get(connection=connection, source_id__endswith=f"/{first}").withdrawn_at is not None
    connection.refresh_from_db()
    assert connection.items == 2
    assert connection.cursor["INBOX"]["seen"] == "2:3"
    assert sync.sync_connection(connection.pk).withdrawn == 0  # withdrawn once


def test_a_sync_stopped_mid_folder_goes_on_from_its_last_page(server, admin_actor, mailbox_category, monkeypatch):
    for n in range(1, 9):
        server.append(message(f"Weekly report {n}", message_id=f"<report-{n}@example.com>"))
    monkeypatch.setattr(imap_kind, "PAGE", 3)
    fetched: list[str] = []
    real_uid = imaplib.IMAP4.uid

    def dropping(self, command, *args):
        if command == "FETCH" and "BODY.PEEK[]" in args[-1]:
            fetched.append(args[0])
            if len(fetched) == 2 and drop:
                raise imaplib.IMAP4.abort("socket error: EOF")
        return real_uid(self, command, *args)

    drop = True
    monkeypatch.setattr(imaplib.IMAP4, "uid", dropping)
    connection = connect(admin_actor, server, mailbox_category)
    stopped = sync.sync_connection(connection.pk)
    assert (stopped.state, stopped.saved) == ("failed", 3)
    connection.refresh_from_db()
    assert "dropped the connection while Brain read 'INBOX'" in connection.last_error
    assert not connection.credentials_refused
    assert connection.cursor["INBOX"]["last_uid"] == 3

    drop, fetched[:] = False, []
    resumed = sync.sync_connection(connection.pk)
    assert (resumed.state, resumed.saved) == ("synced", 5)
    assert fetched == ["4:6", "7:8"]  # from the page it stopped at; nothing read twice
    titles = sorted(documents(connection).values_list("title", flat=True))
    assert titles == [f"Weekly report {n}" for n in range(1, 9)]  # no duplicates, no gaps
    assert SyncedItem.objects.filter(connection=connection).count() == 8


def test_a_refused_password_is_an_error_in_words_and_stops_the_retries(server, admin_actor, mailbox_category):
    server.append(message("Payroll", message_id="<payroll@example.com>"))
    connection = connect(admin_actor, server, mailbox_category, password="an-old-app-password")  # noqa: S106
    outcome = sync.sync_connection(connection.pk)
    assert outcome.state == "failed"
    connection.refresh_from_db()
    assert connection.credentials_refused
    assert "127.0.0.1 refused the username or app password (" in connection.last_error
    assert "AUTHENTICATIONFAILED" in connection.last_error
    assert connection.pk not in sync.due_connections()  # no retry until new credentials
    assert not documents(connection).exists()
    sync.replace_credentials(
        actor=admin_actor,
        connection_id=connection.pk,
        credentials={
            "host": "127.0.0.1",
            "port": str(server.port),
            "username": server.username,
            "password": server.password,
        },
    )
    assert connection.pk in sync.due_connections()
    assert sync.sync_connection(connection.pk).saved == 1


def words(error: str, host: str, port: int) -> str:
    """An error without the host and port a member typed: what it tells them beyond that."""
    bare = host.strip("[]")
    return error.replace(f"[{bare}]:{port}" if ":" in bare else f"{bare}:{port}", "HOST:PORT")


def failure_of(actor, category, *, host: str, port: int, tls: str = "tls") -> str:
    """The words a failed sync of a mailbox at host:port leaves on the connection's page."""
    connection = sync.add_connection(
        actor=actor,
        kind="imap",
        name=f"Mail at {host}:{port}",
        category=category,
        credentials={"host": host, "port": str(port), "username": "sam", "password": "x"},
        options={"folders": "INBOX", "tls": tls},
    )
    assert sync.sync_connection(connection.pk).state == "failed"
    connection.refresh_from_db()
    assert not connection.credentials_refused  # tried again later, like any server that is down
    return words(connection.last_error, host, port)


def closed_port(actor, category) -> str:
    """The words of a port on loopback (allowed in the suite) where nothing listens."""
    return failure_of(actor, category, host="127.0.0.1", port=_free_port())


def watch_connects(monkeypatch) -> list[tuple[str, int]]:
    """Every address the outbound rule opened a socket to; each attempt is refused on the spot, so
    nothing leaves this machine whatever it was aimed at."""
    tried: list[tuple[str, int]] = []

    def refuse(address, timeout):
        tried.append(address)
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr(outbound, "open_socket", refuse)
    return tried


@pytest.fixture
def silent_ports():
    """A loopback port on IPv4 and one on IPv6 that take connections and never answer: a connection
    that should not have been made waits there to be accepted."""
    with (
        socket.create_server(("127.0.0.1", 0)) as four,
        socket.create_server(("::1", 0), family=socket.AF_INET6) as six,
    ):
        yield four, six


def waiting(listener: socket.socket) -> bool:
    listener.setblocking(False)
    try:
        listener.accept()[0].close()
    except BlockingIOError:
        return False
    return True


@pytest.mark.parametrize(
    ("host", "tls"),
    [
        ("127.0.0.1", "plain"),
        ("10.20.30.40", "tls"),
        ("169.254.169.254", "tls"),
        ("[::1]", "plain"),
        ("localhost", "plain"),
        ("[::ffff:127.0.0.1]", "tls"),
        ("0.0.0.0", "tls"),  # noqa: S104 (a destination, not a bind)
    ],
)
def test_a_server_at_an_internal_address_is_refused_before_connecting_in_the_words_of_a_closed_port(
    admin_actor, mailbox_category, settings, monkeypatch, silent_ports, host, tls
):
    closed = closed_port(admin_actor, mailbox_category)  # while loopback is allowed, as in the suite
    connects = watch_connects(monkeypatch)
    settings.BRAIN_OUTBOUND_ALLOW = []
    four, six = silent_ports
    port = (six if host == "[::1]" else four).getsockname()[1]
    assert failure_of(admin_actor, mailbox_category, host=host, port=port, tls=tls) == closed
    assert connects == []  # refused before any socket was opened
    assert not waiting(four)
    assert not waiting(six)


def test_a_silent_port_gives_up_within_the_timeout_in_the_words_of_a_closed_port(
    admin_actor, mailbox_category, settings
):
    settings.BRAIN_OUTBOUND_TIMEOUT_SECONDS = 1
    closed = closed_port(admin_actor, mailbox_category)
    with socket.socket() as silent:  # the kernel accepts connections; nothing ever answers them
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        started = time.monotonic()
        said = failure_of(admin_actor, mailbox_category, host="127.0.0.1", port=silent.getsockname()[1], tls="plain")
        waited = time.monotonic() - started
    assert said == closed
    assert waited < 30  # a cap far above the 1 s asked for; a session's own timeout is 60 s


def test_a_host_the_operator_allows_is_reached(server, admin_actor, mailbox_category, settings):
    server.append(message("Rota", message_id="<rota@example.com>"))
    settings.BRAIN_OUTBOUND_ALLOW = ["localhost"]  # by name; 127.0.0.1 itself is no longer allowed
    connection = sync.add_connection(
        actor=admin_actor,
        kind="imap",
        name="By name",
        category=mailbox_category,
        credentials={
            "host": "localhost",
            "port": str(server.port),
            "username": server.username,
            "password": server.password,
        },
        options={"folders": "INBOX", "tls": "plain"},
    )
    assert sync.sync_connection(connection.pk).saved == 1
    settings.BRAIN_OUTBOUND_ALLOW = ["127.0.0.0/8"]  # by network
    assert connect(admin_actor, server, mailbox_category, name="By address").items == 0
    assert sync.sync_connection(Connection.objects.get(name="By address").pk).saved == 1


def test_the_server_is_connected_to_at_the_address_that_was_checked(admin_actor, mailbox_category, monkeypatch):
    connects = watch_connects(monkeypatch)
    answers = iter([["93.184.216.34"], ["127.0.0.1"], ["127.0.0.1"]])  # public first, then loopback
    monkeypatch.setattr(outbound, "resolve", lambda host, port: next(answers))
    failure_of(admin_actor, mailbox_category, host="imap.example.com", port=993)
    assert connects == [("93.184.216.34", 993)]
    assert next(answers) == ["127.0.0.1"]  # asked once, not again before connecting


def test_a_server_that_does_not_answer_is_tried_again_later(server, admin_actor, mailbox_category):
    port = _free_port()  # nothing listens there
    connection = connect(admin_actor, server, mailbox_category, port=port)
    assert sync.sync_connection(connection.pk).state == "failed"
    connection.refresh_from_db()
    assert f"The mail server 127.0.0.1:{port} could not be reached" in connection.last_error
    assert not connection.credentials_refused
    assert connection.next_sync_at > timezone.now()  # after the interval


def test_a_mailbox_only_goes_into_a_restricted_category(server, admin_actor, mailbox_category):
    server.append(message("Offer letter", message_id="<offer@example.com>"))
    everyone = Category.objects.get(org=admin_actor.org, slug=Category.DEFAULT_SLUG)
    with pytest.raises(InvalidArgument, match="A mailbox is private to its owner, but this connection brings it"):
        connect(admin_actor, server, everyone)
    assert not Connection.objects.exists()

    connection = connect(admin_actor, server, mailbox_category)
    Category.objects.filter(pk=mailbox_category.pk).update(restricted=False)  # opened up after
    outcome = sync.sync_connection(connection.pk)
    assert outcome.state == "failed"
    connection.refresh_from_db()
    assert "A mailbox is private to its owner" in connection.last_error
    assert connection.credentials_refused
    assert not documents(connection).exists()


def test_plain_imap_is_refused_for_a_server_elsewhere(admin_actor, mailbox_category):
    with pytest.raises(InvalidArgument, match="Plain IMAP sends the password and every message unencrypted"):
        sync.add_connection(
            actor=admin_actor,
            kind="imap",
            name="Remote",
            category=mailbox_category,
            credentials={"host": "imap.example.com", "port": "143", "username": "sam", "password": "x"},
            options={"folders": "", "tls": "plain"},
        )
    with pytest.raises(InvalidArgument, match="The port is a number"):
        sync.add_connection(
            actor=admin_actor,
            kind="imap",
            name="Remote",
            category=mailbox_category,
            credentials={"host": "imap.example.com", "port": "imaps", "username": "sam", "password": "x"},
            options={"folders": "", "tls": ""},
        )
    kept = sync.add_connection(
        actor=admin_actor,
        kind="imap",
        name="Remote",
        category=mailbox_category,
        credentials={"host": "imap.example.com", "port": "993", "username": "sam", "password": "x"},
        options={"folders": "INBOX\nArchive\nINBOX", "tls": ""},
    )
    assert kept.options == {"folders": ["INBOX", "Archive"], "tls": "tls"}


def test_a_rebuilt_folder_is_read_again_without_duplicates(server, admin_actor, mailbox_category):
    server.create("Projects")
    for n in (1, 2):
        server.append(message(f"Project {n}", message_id=f"<project-{n}@example.com>"), folder="Projects")
    connection = connect(admin_actor, server, mailbox_category, folders="Projects")
    assert sync.sync_connection(connection.pk).saved == 2
    before = server.uidvalidity("Projects")

    server.delete("Projects")  # restored from a backup, say: the same mail under new UIDs
    server.create("Projects")
    for n in (1, 2, 3):
        server.append(message(f"Project {n}", message_id=f"<project-{n}@example.com>"), folder="Projects")
    assert server.uidvalidity("Projects") != before
    outcome = sync.sync_connection(connection.pk)
    assert (outcome.state, outcome.withdrawn, outcome.saved) == ("synced", 2, 3)
    titles = sorted(documents(connection).values_list("title", flat=True))
    assert titles == ["Project 1", "Project 2", "Project 3"]
    connection.refresh_from_db()
    assert connection.cursor["Projects"]["uidvalidity"] == server.uidvalidity("Projects")
    assert connection.items == 3
    assert sync.sync_connection(connection.pk).saved == 0


def test_an_admin_adds_an_imap_connection_on_the_page(admin_actor, mailbox_category):
    client = Client()
    client.force_login(admin_actor.user)
    page = client.get("/connectors/").content.decode()
    assert 'id="id_imap-credential_host" name="imap-credential_host" type="text"' in page
    assert 'id="id_imap-credential_password" name="imap-credential_password" type="password"' in page
    form = {"org": admin_actor.org.pk, "kind": "imap", "name": "Sam's mail", "category": mailbox_category.pk,
            "credential_host": "imap.example.com", "credential_port": "993", "credential_username": "sam@example.com",
            "credential_password": "abcd-efgh-ijkl", "option_folders": "INBOX\nSent", "option_tls": "tls"}  # fmt: skip
    assert client.post("/connectors/", form).status_code == 302
    connection = Connection.objects.get(org=admin_actor.org)
    assert connection.options == {"folders": ["INBOX", "Sent"], "tls": "tls"}
    assert unseal(connection.sealed_credentials)["password"] == "abcd-efgh-ijkl"
    page = client.get("/connectors/").content.decode()
    assert "abcd-efgh-ijkl" not in page
    assert 'name="credential_password" type="password"' in page  # replacing asks for every field again
    refused = client.post(
        "/connectors/",
        {
            **form,
            "name": "Open mail",
            "category": Category.objects.get(org=admin_actor.org, slug=Category.DEFAULT_SLUG).pk,
        },
    )
    assert refused.status_code == 400
    assert "A mailbox is private to its owner" in refused.content.decode()


def test_uid_sets_folder_names_and_fetch_answers_are_read_as_imap_writes_them():
    assert _ranges([9, 1, 2, 3, 5, 8]) == "1:3,5,8:9"
    assert _expand("1:3,5,8:9") == {1, 2, 3, 5, 8, 9}
    assert _expand("") == set()
    assert _quoted("Entwürfe") == '"Entw&APw-rfe"'
    assert _quoted('R&D "old"') == '"R&-D \\"old\\""'
    answer = [(b"1 (UID 4 RFC822.SIZE 5 BODY[] {5}", b"hello"), b")", (b"2 (BODY[] {3}", b"abc"), b" UID 9)",
              b"3 (FLAGS (\\Seen))"]  # fmt: skip
    assert _fetched(answer) == {4: (5, b"hello"), 9: (0, b"abc")}


@pytest.mark.parametrize("mode", ["tls", "starttls"])
def test_tls_and_starttls_check_the_servers_certificate(admin_actor, mailbox_category, monkeypatch, caplog, mode):
    with imap_server(tls=True) as secure:
        secure.append(message("Board pack", message_id="<board@example.com>"))
        port = secure.tls_port if mode == "tls" else secure.port
        connection = sync.add_connection(
            actor=admin_actor,
            kind="imap",
            name=f"Secure {mode}",
            category=mailbox_category,
            credentials={
                "host": "127.0.0.1",
                "port": str(port),
                "username": secure.username,
                "password": secure.password,
            },
            options={"folders": "INBOX", "tls": mode},
        )
        assert sync.sync_connection(connection.pk).state == "failed"
        connection.refresh_from_db()
        # The page says what it says of a closed port, and nothing of the certificate; the log says why.
        assert words(connection.last_error, "127.0.0.1", port) == closed_port(admin_actor, mailbox_category)
        assert "certificate" not in connection.last_error
        assert "CERTIFICATE_VERIFY_FAILED" in caplog.text
        assert not connection.credentials_refused

        trusting = ssl.create_default_context
        monkeypatch.setattr(ssl, "create_default_context", lambda: trusting(cafile=secure.certificate))
        Connection.objects.filter(pk=connection.pk).update(next_sync_at=timezone.now())
        outcome = sync.sync_connection(connection.pk)
        assert (outcome.state, outcome.saved) == ("synced", 1)


def test_a_message_to_hundreds_with_a_subject_of_pages_is_kept_within_the_limits(server, admin_actor, mailbox_category):
    mail = message("word " * 1000, message_id="<all-hands@example.com>")
    mail.replace_header("To", ", ".join(f"Person {n} <p{n}@example.com>" for n in range(300)))
    server.append(mail)
    connection = connect(admin_actor, server, mailbox_category)
    outcome = sync.sync_connection(connection.pk)
    assert (outcome.state, outcome.saved) == ("synced", 1)
    kept = documents(connection).get()
    assert len(kept.title) <= 240
    assert len(kept.metadata["to"]) == 21
    assert kept.metadata["to"][-1] == "and 280 more"
    assert "p299@example.com" in kept.content  # the whole header stays in the text
