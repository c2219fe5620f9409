"""Files made to cost a reader much for their size: what the upload budget must refuse in time.

Used by ``bench.hostile`` and by the tests of memory.upload.reading; pure, no Django.
"""

from __future__ import annotations

import io
from email.message import EmailMessage

from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject


def shared_stream_pdf(*, pages: int, stream_bytes: int, text: bool = True) -> bytes:
    """A PDF of ``pages`` pages that all draw one content stream of ``stream_bytes``, compressed,
    so the file is small and every page is that stream again. ``text``: the stream shows words
    (the reader's output grows); otherwise it only saves and restores the state (time, no text)."""
    op = b"BT /F1 12 Tf 10 10 Td (hostile words) Tj ET\n" if text else b"q Q\n"
    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    plain = DecodedStreamObject()
    plain.set_data(op * (stream_bytes // len(op)))
    shared = writer._add_object(plain.flate_encode())  # one object, referenced by every page
    for _ in range(pages - 1):
        writer.add_blank_page(width=200, height=200)
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    resources = writer._add_object(DictionaryObject({NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}))
    for page in writer.pages:
        page[NameObject("/Contents")] = shared
        page[NameObject("/Resources")] = resources
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def mbox(*, messages: int) -> bytes:
    """A mailbox of ``messages`` short messages, each a document of its own when read."""
    parts = []
    for n in range(messages):
        message = EmailMessage()
        message["From"] = f"sender{n}@example.com"
        message["To"] = "team@example.com"
        message["Subject"] = f"Note {n}"
        message["Message-ID"] = f"<note-{n}@example.com>"
        message["Date"] = "Mon, 02 Mar 2026 09:00:00 +0000"
        message.set_content(f"Short note number {n} about the weekly plan.")
        parts.append(b"From sender@example.com Mon Mar  2 09:00:00 2026\n" + message.as_bytes() + b"\n")
    return b"".join(parts)
