"""A real IMAP server for the mail connector's tests: Debian's dovecot (package ``dovecot-imapd``),
started on a free loopback port with a configuration of its own in a temporary folder (one user
in a passwd-file with a plain password, maildir under the folder, no TLS, cleartext logins
allowed, failed logins answered at once), and stopped with the test. Mail is put in with APPEND,
as a mail program files a message, and taken out with STORE \\Deleted and EXPUNGE.

As root, dovecot runs its login processes as ``dovenull`` and keeps the mail as ``dovecot`` (the
package makes both users); as anyone else, everything runs as that user.
"""

from __future__ import annotations

import grp
import imaplib
import io
import ipaddress
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from pypdf import PdfWriter
from pypdf.generic import ContentStream, DecodedStreamObject, DictionaryObject, NameObject

STARTUP_SECONDS = 60  # the most a slow machine may take to start it; polled, not slept


@dataclass
class MailServer:
    port: int
    root: Path
    tls_port: int = 0  # implicit TLS, when started with a certificate
    certificate: str = ""  # the PEM file a client trusts to check the server
    username: str = "sam@example.com"
    password: str = "app-password-7"  # noqa: S105 (the test server's own)

    def client(self) -> imaplib.IMAP4:
        imap = imaplib.IMAP4("127.0.0.1", self.port, timeout=30)
        imap.login(self.username, self.password)
        return imap

    def append(self, message: EmailMessage | bytes, folder: str = "INBOX") -> int:
        """File one message in ``folder``; its UID."""
        raw = message if isinstance(message, bytes) else message.as_bytes()
        imap = self.client()
        try:
            status, answer = imap.append(folder, None, None, raw)
            assert status == "OK", answer
            found = re.search(rb"APPENDUID \d+ (\d+)", answer[0])
            assert found is not None, answer
            return int(found.group(1))
        finally:
            imap.logout()

    def append_all(self, messages: list[EmailMessage], folder: str = "INBOX") -> None:
        """File many messages over one session."""
        imap = self.client()
        try:
            for message in messages:
                status, answer = imap.append(folder, None, None, message.as_bytes())
                assert status == "OK", answer
        finally:
            imap.logout()

    def expunge(self, uids: list[int], folder: str = "INBOX") -> None:
        imap = self.client()
        try:
            imap.select(folder)
            imap.uid("STORE", ",".join(map(str, uids)), "+FLAGS.SILENT", "(\\Deleted)")
            imap.expunge()
        finally:
            imap.logout()

    def create(self, folder: str) -> None:
        self._simple(lambda imap: imap.create(folder))

    def delete(self, folder: str) -> None:
        self._simple(lambda imap: imap.delete(folder))

    def uidvalidity(self, folder: str) -> int:
        imap = self.client()
        try:
            imap.select(folder, readonly=True)
            return int(imap.response("UIDVALIDITY")[1][0])
        finally:
            imap.logout()

    def _simple(self, command: object) -> None:
        imap = self.client()
        try:
            status, answer = command(imap)  # type: ignore[operator]
            assert status == "OK", answer
        finally:
            imap.logout()


def pdf_saying(text: str) -> bytes:
    """A one-page PDF whose text is ``text``, for an attachment."""
    writer = PdfWriter()
    page = writer.add_blank_page(width=300, height=200)
    font = {NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica")}  # fmt: skip
    fonts = DictionaryObject({NameObject("/F1"): DictionaryObject(font)})
    page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): fonts})
    stream = DecodedStreamObject()
    stream.set_data(f"BT /F1 12 Tf 20 100 Td ({text}) Tj ET".encode("latin-1"))
    page.replace_contents(ContentStream(stream, writer))
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _version(binary: str) -> tuple[int, int]:
    text = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout  # noqa: S603
    found = re.match(r"(\d+)\.(\d+)", text.strip())
    return (int(found.group(1)), int(found.group(2))) if found else (2, 3)


def _accounts(root: Path) -> dict[str, str]:
    """Who runs what: as root, the package's own unprivileged users; else the current user."""
    if os.geteuid() == 0:
        mail = pwd.getpwnam("dovecot")
        shutil.chown(root / "mail", mail.pw_uid, mail.pw_gid)
        return {"login": "dovenull", "internal": "dovecot", "group": grp.getgrgid(mail.pw_gid).gr_name,
                "uid": str(mail.pw_uid), "gid": str(mail.pw_gid)}  # fmt: skip
    me = pwd.getpwuid(os.geteuid())
    return {"login": me.pw_name, "internal": me.pw_name, "group": grp.getgrgid(os.getegid()).gr_name,
            "uid": str(me.pw_uid), "gid": str(os.getegid())}  # fmt: skip


def _certificate(root: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost, and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.now(UTC)
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = root / "server.pem", root / "server.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


def _config(root: Path, server: MailServer, version: tuple[int, int], who: dict[str, str]) -> str:
    port, tls_port = server.port, server.tls_port
    if not server.certificate:
        ssl_lines = "ssl = no\n"
    elif version >= (2, 4):
        ssl_lines = f"ssl = yes\nssl_server_cert_file = {root}/server.pem\nssl_server_key_file = {root}/server.key\n"
    else:
        ssl_lines = f"ssl = yes\nssl_cert = <{root}/server.pem\nssl_key = <{root}/server.key\n"
    common = f"""protocols = imap
listen = 127.0.0.1
base_dir = {root}/run
state_dir = {root}/state
log_path = {root}/dovecot.log
{ssl_lines}auth_mechanisms = plain login
auth_failure_delay = 0
default_login_user = {who["login"]}
default_internal_user = {who["internal"]}
default_internal_group = {who["group"]}
first_valid_uid = 0
"""
    if version >= (2, 4):  # its settings were renamed and regrouped
        return (
            common
            + f"""dovecot_config_version = 2.4.0
dovecot_storage_version = 2.4.0
auth_allow_cleartext = yes
mail_driver = maildir
mail_home = {root}/mail/%{{user}}
mail_path = ~/Maildir
mail_uid = {who["uid"]}
mail_gid = {who["gid"]}
namespace inbox {{
  inbox = yes
}}
passdb passwd-file {{
  passwd_file_path = {root}/passwd
}}
userdb static {{
}}
service imap-login {{
  inet_listener imap {{
    listen = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    port = {tls_port}
  }}
}}
"""
        )
    return (
        common
        + f"""disable_plaintext_auth = no
mail_location = maildir:{root}/mail/%u
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {root}/passwd
}}
userdb {{
  driver = static
  args = uid={who["uid"]} gid={who["gid"]} home={root}/mail/%u
}}
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    port = {tls_port}
  }}
}}
"""
    )


def _wait_until_it_answers(server: MailServer, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        try:
            server.client().logout()
            return
        except (OSError, imaplib.IMAP4.error) as exc:
            log = server.root / "dovecot.log"
            if process.poll() is not None or time.monotonic() > deadline:
                said = "".join(p.read_text()[-2000:] for p in (log, server.root / "output.log") if p.exists())
                pytest.fail(f"dovecot did not start ({exc}); its log:\n{said}")
            time.sleep(0.05)


@contextmanager
def imap_server(*, tls: bool = False) -> Iterator[MailServer]:
    """A running dovecot; with ``tls``, STARTTLS on its port and implicit TLS on ``tls_port``, with a
    certificate of its own (``certificate``) that no system trusts."""
    binary = shutil.which("dovecot") or "/usr/sbin/dovecot"
    if not Path(binary).exists():
        pytest.fail("The mail connector's tests need dovecot: apt-get install dovecot-imapd (./brainctl test does).")
    with tempfile.TemporaryDirectory(prefix="brain-imap-") as tmp:
        root = Path(tmp)
        root.chmod(0o755)  # dovecot's own users walk into it
        for name in ("run", "state", "mail"):
            (root / name).mkdir()
        server = MailServer(port=_free_port(), root=root)
        if tls:
            server.tls_port, server.certificate = _free_port(), str(_certificate(root)[0])
        (root / "passwd").write_text(f"{server.username}:{{PLAIN}}{server.password}::::::\n")
        config = root / "dovecot.conf"
        config.write_text(_config(root, server, _version(binary), _accounts(root)))
        with (root / "output.log").open("wb") as output:
            process = subprocess.Popen([binary, "-F", "-c", str(config)], stdout=output, stderr=output)  # noqa: S603
        try:
            _wait_until_it_answers(server, process)
            yield server
        finally:
            process.terminate()
            try:
                process.wait(timeout=STARTUP_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
