"""Mail over IMAP: the messages of chosen folders of one mailbox, each with its attachments.

A message is read the way an uploaded ``.eml`` file is (``memory.extraction.mail``): its subject is
the title, its ``Date:`` header the moment it speaks from, its sender the speaker, and its thread
(the first message its ``References`` or ``In-Reply-To`` name, else its own ``Message-ID``) the
conversation, so a thread reads together. Its body is the text part, or the HTML part turned into
text. Each attachment Brain reads (PDF, HTML, text, an attached message...) is read by the upload
reader, in a process of its own under the same budget as an uploaded file, and kept in the
message's own document under its name: a message and what came with it are found, read and
withdrawn together.

Python's ``imaplib`` is used: the commands needed are few (LOGIN, EXAMINE, UID SEARCH, UID FETCH)
and it brings no dependency.

Items are keyed by folder, UIDVALIDITY and UID, the one identity IMAP promises. A ``Message-ID``
is chosen by whoever sends the mail: keyed by it, an outsider could send a message with the id of
one already kept and replace it, and copies of one message (a list's, a draft saved again) would
collapse. The cursor keeps per folder its UIDVALIDITY, the last UID read and the UIDs read (as
ranges, ``1:40,42``): a sync asks the folder which UIDs it holds (``UID SEARCH ALL``), withdraws
those it no longer holds, and reads the ones past the last in pages, so a sync stopped mid-folder
goes on from its last saved page. When the server changes a folder's UIDVALIDITY (it was rebuilt;
old UIDs mean nothing any more), what was read from it is withdrawn and the folder read again.

A mailbox is private to its owner: a connection refuses to bring one into a category every member
reads; its readers are the restricted category's groups.
"""

from __future__ import annotations

import base64
import imaplib
import ipaddress
import re
import socket
import ssl
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from email.message import EmailMessage, Message
from typing import Any
from urllib.parse import quote

from brain.infra import outbound
from connectors.kinds import CredentialsRefused, Item, Kind, Page, SourceError, register
from memory.extraction import read_message
from memory.limits import MAX_DOCUMENT_CHARS
from memory.upload.attachments import Attachment, max_attachment_bytes, read_attachment

PAGE = 50  # messages fetched and saved together
GONE_PAGE = 1000  # withdrawals saved together
TIMEOUT = 60  # seconds an open session waits for one answer (opening it: BRAIN_OUTBOUND_TIMEOUT_SECONDS)
MAX_FOLDERS = 20
MAX_FOLDER_CHARS = 100  # a folder's name is part of each item's id
MAX_LISTED = 20  # recipients (or attachments) named in a message's metadata
MAX_FIELD = 300  # characters of one of them
MAX_URL = 1000  # a document's source_url (memory.limits)
MODES = {"tls": 993, "starttls": 143, "plain": 143}
LOOPBACK_NAMES = ("localhost", "localhost.localdomain")
# Answers to LOGIN that say "later", not "wrong" (RFC 5530).
TEMPORARY = re.compile(rb"\[(UNAVAILABLE|INUSE|SERVERBUG|LIMIT)\]", re.I)
MESSAGE_START = re.compile(rb"^\d+ \(")
UID = re.compile(rb"\bUID (\d+)")
SIZE = re.compile(rb"\bRFC822\.SIZE (\d+)")


def _max_message_bytes() -> int:
    """A message past this is kept by its headers alone: attachments travel base64-encoded (a third
    larger), so it is room for a few files of the largest size Brain reads."""
    return 3 * max_attachment_bytes()


@register
class Imap(Kind):
    slug = "imap"
    label = "Mail over IMAP"
    credential_fields = {
        "host": "IMAP server (e.g. imap.gmail.com, outlook.office365.com, imap.fastmail.com)",
        "port": "Port (993 for TLS, 143 for STARTTLS)",
        "username": "Username (usually the full mail address)",
        "password": "App password (made for Brain in the mail provider's security settings)",
    }
    option_fields = {
        "folders": "Folders, one per line (INBOX when empty)",
        "tls": "Security",
    }
    open_fields = frozenset({"host", "port", "username"})
    number_fields = frozenset({"port"})
    list_fields = frozenset({"folders"})
    choice_fields = {
        "tls": (
            ("tls", "TLS (port 993; the usual)"),
            ("starttls", "STARTTLS (port 143)"),
            ("plain", "None: only for a server on this machine"),
        )
    }

    @classmethod
    def clean_options(cls, raw: dict[str, str]) -> dict[str, Any]:
        folders = [line.strip() for line in raw.get("folders", "").splitlines() if line.strip()] or ["INBOX"]
        if len(folders) > MAX_FOLDERS:
            raise ValueError(f"At most {MAX_FOLDERS} folders in one connection.")
        if long := next((f for f in folders if len(f) > MAX_FOLDER_CHARS), None):
            raise ValueError(f"The folder name {long[:40]!r}... is longer than {MAX_FOLDER_CHARS} characters.")
        if odd := next((f for f in folders if any(ord(c) < 32 for c in f)), None):
            raise ValueError(f"The folder name {odd!r} holds a control character.")
        mode = (raw.get("tls", "") or "tls").strip().lower()
        if mode not in MODES:
            raise ValueError("Security is tls, starttls or plain.")
        return {"folders": list(dict.fromkeys(folders)), "tls": mode}

    @classmethod
    def check(cls, *, credentials: dict[str, str], options: dict[str, Any], restricted: bool) -> None:
        if problem := _problem(credentials, options, restricted):
            raise ValueError(problem)

    def pages(self, cursor: dict[str, Any]) -> Iterator[Page]:
        if problem := _problem(self.credentials, self.options, self.restricted):
            raise CredentialsRefused(problem)
        state = {folder: dict(cursor.get(folder, {})) for folder in self.options["folders"]}
        with self._session() as imap:
            for folder in self.options["folders"]:
                for here, items in self._folder(imap, folder, state[folder]):
                    state[folder] = here
                    yield Page(items=items, cursor={**cursor, **state})

    # --- the session --------------------------------------------------------------------------

    @contextmanager
    def _session(self) -> Iterator[imaplib.IMAP4]:
        host, port = self.credentials["host"].strip(), int(self.credentials["port"])
        try:
            imap = _open(outbound.check(host, port), self.options.get("tls", "tls"))
        except (OSError, imaplib.IMAP4.error) as exc:  # a refused address, a closed or silent port, bad TLS
            raise SourceError(
                outbound.unreachable("The mail server", host=host, port=port, error=exc) + " Trying again later."
            ) from exc
        try:
            self._login(imap, host)
            yield imap
        finally:
            with suppress(OSError, imaplib.IMAP4.error):
                imap.logout()

    def _login(self, imap: imaplib.IMAP4, host: str) -> None:
        try:
            imap.login(self.credentials["username"].strip(), self.credentials["password"].strip())
        except imaplib.IMAP4.abort as exc:
            raise SourceError(f"{host} closed the connection while Brain logged in ({_why(exc)}).") from exc
        except imaplib.IMAP4.error as exc:
            said = exc.args[0] if exc.args and isinstance(exc.args[0], bytes) else str(exc).encode()
            if TEMPORARY.search(said):
                raise SourceError(f"{host} cannot log Brain in just now ({_why(exc)}); trying again later.") from exc
            raise CredentialsRefused(
                f"{host} refused the username or app password ({_why(exc)}). Check them, or make a new app "
                "password, and paste it under Replace credentials."
            ) from exc
        except OSError as exc:
            raise SourceError(f"{host} stopped answering while Brain logged in ({_why(exc)}).") from exc

    # --- one folder ---------------------------------------------------------------------------

    def _folder(
        self, imap: imaplib.IMAP4, folder: str, here: dict[str, Any]
    ) -> Iterator[tuple[dict[str, Any], list[Item]]]:
        """(the folder's cursor after a page, the page's items), page by page."""
        validity = self._examine(imap, folder)
        if here and here.get("uidvalidity") != validity:
            # The old UIDs name nothing any more: withdraw what they brought in, then read afresh.
            old, left = here["uidvalidity"], sorted(_expand(here.get("seen", "")))
            while left:
                chunk, left = left[:GONE_PAGE], left[GONE_PAGE:]
                here = {**here, "seen": _ranges(left)}
                yield here, [self._gone(folder, old, uid) for uid in chunk]
            here = {}
        here = here or {"uidvalidity": validity, "last_uid": 0, "seen": ""}
        present = self._uids(imap, folder)
        seen = _expand(here["seen"])
        gone = sorted(seen - present)
        for start in range(0, len(gone), GONE_PAGE):
            seen -= set(gone[start : start + GONE_PAGE])
            here = {**here, "seen": _ranges(seen)}
            yield here, [self._gone(folder, validity, uid) for uid in gone[start : start + GONE_PAGE]]
        new = sorted(uid for uid in present if uid > here["last_uid"])
        for start in range(0, len(new), PAGE):
            batch = new[start : start + PAGE]
            read = self._read(imap, folder, validity, batch)
            seen |= {int(item.metadata["uid"]) for item in read}
            here = {"uidvalidity": validity, "last_uid": batch[-1], "seen": _ranges(seen)}
            yield here, read
        if not gone and not new:
            yield here, []  # nothing new: the cursor (a first UIDVALIDITY) is still worth keeping

    def _examine(self, imap: imaplib.IMAP4, folder: str) -> int:
        status, answer = _ask(imap, folder, lambda: imap.select(_quoted(folder), readonly=True))
        if status != "OK":
            raise SourceError(
                f"The mailbox has no folder {folder!r} Brain may read ({_said(answer)}). Check its name as the "
                "server spells it (INBOX, Sent, Archive, or the provider's own, such as [Gmail]/All Mail)."
            )
        _, values = imap.response("UIDVALIDITY")
        try:
            return int(values[0])
        except (TypeError, ValueError, IndexError):
            raise SourceError(f"The server gave no UIDVALIDITY for {folder!r}; Brain cannot follow it.") from None

    def _uids(self, imap: imaplib.IMAP4, folder: str) -> set[int]:
        status, answer = _ask(imap, folder, lambda: imap.uid("SEARCH", "ALL"))
        if status != "OK":
            raise SourceError(f"The server would not list {folder!r} ({_said(answer)}); trying again later.")
        return {int(uid) for line in answer if isinstance(line, bytes) for uid in line.split()}

    def _read(self, imap: imaplib.IMAP4, folder: str, validity: int, uids: list[int]) -> list[Item]:
        sizes = {uid: size for uid, (size, _) in self._fetch(imap, folder, uids, "(UID RFC822.SIZE)").items()}
        small = [uid for uid in uids if sizes.get(uid, 0) <= _max_message_bytes() and uid in sizes]
        large = [uid for uid in uids if sizes.get(uid, 0) > _max_message_bytes()]
        bodies = self._fetch(imap, folder, small, "(UID BODY.PEEK[])") if small else {}
        heads = self._fetch(imap, folder, large, "(UID BODY.PEEK[HEADER])") if large else {}
        items = []
        for uid in uids:
            if uid in bodies:
                items.append(self._item(folder, validity, uid, bodies[uid][1], whole=True))
            elif uid in heads:
                items.append(self._item(folder, validity, uid, heads[uid][1], whole=False, size=sizes[uid]))
        return items  # a UID expunged between the listing and the fetch is simply absent

    def _fetch(self, imap: imaplib.IMAP4, folder: str, uids: list[int], what: str) -> dict[int, tuple[int, bytes]]:
        status, answer = _ask(imap, folder, lambda: imap.uid("FETCH", _ranges(uids), what))
        if status != "OK":
            raise SourceError(f"The server would not hand over messages of {folder!r} ({_said(answer)}).")
        return _fetched(answer)

    # --- one message --------------------------------------------------------------------------

    def _item(self, folder: str, validity: int, uid: int, raw: bytes, *, whole: bool, size: int = 0) -> Item:
        parsed, message = read_message(raw, name=f"{folder}/{uid}.eml")
        content = parsed.content
        attachments, notes = [], []
        if whole:
            for attached in _attachments(message):
                attachments.append(attached.name)
                if attached.not_read:
                    notes.append(f"{attached.name}: {attached.not_read}")
                else:
                    content += f"\n\n## Attached: {attached.name}\n\n{attached.text}"
        else:
            notes.append(f"the message is {size / 1024**2:.0f} MB, more than Brain reads; its headers alone are kept")
        # Bounded, so no message (a subject of pages, a list mail to hundreds) passes the metadata
        # limit and stops the sync on it.
        metadata: dict[str, Any] = {
            "kind": "mail",
            "from": str(parsed.metadata.get("from", ""))[:MAX_FIELD],
            "to": _few(parsed.metadata.get("to")),
            "cc": _few(parsed.metadata.get("cc")),
            "subject": str(parsed.metadata.get("subject", ""))[:MAX_FIELD],
            "folder": folder,
            "uid": uid,
            "message_id": parsed.external_id[:MAX_FIELD] if "@" in parsed.external_id else "",
            "thread": parsed.conversation,
            "attachments": _few(attachments),
            **({"not_read": _few(notes)} if notes else {}),
        }
        return Item(
            source_id=_source_id(folder, validity, uid),
            version="1",  # a message never changes under its UID (RFC 9051); only its flags do
            title=parsed.title,
            content=content[:MAX_DOCUMENT_CHARS],
            content_type=parsed.content_type,
            url=self._url(folder, validity, uid),
            occurred_at=parsed.occurred_at,
            metadata=metadata,
            speaker=parsed.speaker,
            conversation=parsed.conversation,
        )

    def _gone(self, folder: str, validity: int, uid: int) -> Item:
        return Item(source_id=_source_id(folder, validity, uid), version="", gone=True)

    def _url(self, folder: str, validity: int, uid: int) -> str:
        """The message's IMAP URL (RFC 5092), which some mail programs open."""
        host = self.credentials["host"].strip()
        url = f"imap://{host}/{quote(folder)};UIDVALIDITY={validity}/;UID={uid}"
        return url if len(url) <= MAX_URL else ""


class _Pinned(imaplib.IMAP4):
    """IMAP over a socket to the addresses the outbound rule checked; STARTTLS checks the name."""

    def __init__(self, destination: outbound.Destination) -> None:
        self.destination = destination
        super().__init__(destination.host, destination.port, timeout=outbound.timeout_seconds())

    def _create_socket(self, timeout: float | None) -> socket.socket:
        return outbound.connect(self.destination, timeout=timeout)


class _PinnedTLS(imaplib.IMAP4_SSL):
    """IMAP over TLS (port 993) on a socket to the checked addresses, the certificate checked for the name."""

    def __init__(self, destination: outbound.Destination) -> None:
        self.destination = destination
        super().__init__(
            destination.host,
            destination.port,
            ssl_context=ssl.create_default_context(),
            timeout=outbound.timeout_seconds(),
        )

    def _create_socket(self, timeout: float | None) -> socket.socket:
        sock = outbound.connect(self.destination, timeout=timeout)
        return self.ssl_context.wrap_socket(sock, server_hostname=self.host)


def _open(destination: outbound.Destination, mode: str) -> imaplib.IMAP4:
    """A session past the greeting (and STARTTLS), opened within the outbound timeout; what is read
    after that (a large folder's messages) may take up to TIMEOUT between answers."""
    imap: imaplib.IMAP4 = _PinnedTLS(destination) if mode == "tls" else _Pinned(destination)
    try:
        if mode == "starttls":
            imap.starttls(ssl_context=ssl.create_default_context())
        imap.sock.settimeout(TIMEOUT)
    except BaseException:
        with suppress(OSError):
            imap.shutdown()
        raise
    return imap


def _few(values: object) -> list[str]:
    listed = [str(value)[:MAX_FIELD] for value in values] if isinstance(values, list) else []
    return listed[:MAX_LISTED] + ([f"and {len(listed) - MAX_LISTED} more"] if len(listed) > MAX_LISTED else [])


def _problem(credentials: dict[str, str], options: dict[str, Any], restricted: bool) -> str | None:
    """Why these credentials and options cannot be used, in a sentence, or None."""
    if not restricted:
        return (
            "A mailbox is private to its owner, but this connection brings it into a category every member "
            "reads. Add it again into a restricted category whose groups are the people who may read this mailbox."
        )
    host, port = credentials.get("host", "").strip(), credentials.get("port", "").strip()
    if not port.isdigit() or not 0 < int(port) < 65536:
        return f"The port is a number from 1 to 65535 ({MODES['tls']} for TLS, {MODES['starttls']} for STARTTLS)."
    if not re.fullmatch(r"[A-Za-z0-9.:\[\]-]+", host):
        return "The server is a host name or an address, such as imap.example.com."
    mode = options.get("tls", "tls")
    if mode == "plain" and not _loopback(host):
        return (
            f"Plain IMAP sends the password and every message unencrypted, so Brain uses it only with a server on "
            f"this machine (127.0.0.1, ::1 or localhost); choose tls or starttls for {host}."
        )
    if not (credentials.get("username", "") + credentials.get("password", "")).isascii():
        return "IMAP logins carry only ASCII characters; an app password made by the provider always does."
    return None


def _loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _attachments(message: Message) -> Iterator[Attachment]:
    """Each named attachment, read as an uploaded file is (``memory.upload.attachments``)."""
    if not isinstance(message, EmailMessage):
        return
    for part in message.iter_attachments():
        data: Any
        if part.get_content_type() == "message/rfc822":
            name, data = part.get_filename() or "attached message.eml", _attached_message(part)
        else:
            name, data = part.get_filename() or "", part.get_payload(decode=True)
        if name:
            yield read_attachment(name, data)


def _attached_message(part: EmailMessage) -> bytes | None:
    inner = part.get_payload()
    first = inner[0] if isinstance(inner, list) and inner else None
    return first.as_bytes() if isinstance(first, Message) else None


def _source_id(folder: str, validity: int, uid: int) -> str:
    return f"{folder}/{validity}/{uid}"


def _ask(imap: imaplib.IMAP4, folder: str, command: Any) -> tuple[str, list[Any]]:
    """One command; a dropped connection or a silent server is a SourceError, tried again later."""
    try:
        status, answer = command()
    except imaplib.IMAP4.abort as exc:
        raise SourceError(f"The server dropped the connection while Brain read {folder!r} ({_why(exc)}).") from exc
    except imaplib.IMAP4.error as exc:
        return "NO", [str(exc).encode()]
    except OSError as exc:  # a timeout too
        raise SourceError(f"The server stopped answering while Brain read {folder!r} ({_why(exc)}).") from exc
    return str(status), list(answer or [])


def _fetched(answer: Iterable[Any]) -> dict[int, tuple[int, bytes]]:
    """UID -> (RFC822.SIZE or 0, the literal or b"") from a UID FETCH answer. imaplib hands each
    literal as (text before it, literal) and the text after it as bytes of its own; a server may
    name the UID before or after the literal."""
    found: dict[int, tuple[int, bytes]] = {}
    text, literal = b"", b""

    def close() -> None:
        if (uid := UID.search(text)) is not None:
            size = SIZE.search(text)
            found[int(uid.group(1))] = (int(size.group(1)) if size else 0, literal)

    for part in answer:
        head = part[0] if isinstance(part, tuple) else part
        if not isinstance(head, bytes):
            continue
        if MESSAGE_START.match(head):
            close()
            text, literal = b"", b""
        text += head
        if isinstance(part, tuple) and isinstance(part[1], bytes):
            literal = part[1]
    close()
    return found


def _ranges(uids: Iterable[int]) -> str:
    """UIDs as an IMAP sequence set: 1:3,5,8:9."""
    spans: list[list[int]] = []
    for uid in sorted(set(uids)):
        if spans and uid == spans[-1][1] + 1:
            spans[-1][1] = uid
        else:
            spans.append([uid, uid])
    return ",".join(f"{a}:{b}" if a != b else str(a) for a, b in spans)


def _expand(text: str) -> set[int]:
    uids: set[int] = set()
    for span in filter(None, text.split(",")):
        first, _, last = span.partition(":")
        uids.update(range(int(first), int(last or first) + 1))
    return uids


def _quoted(folder: str) -> str:
    """A folder's name as IMAP writes it: modified UTF-7 (RFC 3501 5.1.3), quoted."""
    name = ""
    for run in re.findall(r"[ -~]+|[^ -~]+", folder):
        if " " <= run[0] <= "~":
            name += run.replace("&", "&-")
        else:
            encoded = base64.b64encode(run.encode("utf-16-be")).rstrip(b"=").replace(b"/", b",")
            name += f"&{encoded.decode()}-"
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _why(exc: BaseException) -> str:
    said = exc.args[0] if exc.args else exc.__class__.__name__
    text = said.decode(errors="replace") if isinstance(said, bytes) else str(said)
    return " ".join(text.split())[:200] or exc.__class__.__name__


def _said(answer: list[Any]) -> str:
    first = answer[0] if answer else b""
    text = first.decode(errors="replace") if isinstance(first, bytes) else str(first)
    return " ".join(text.split())[:200] or "no reason given"
