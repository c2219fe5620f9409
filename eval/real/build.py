"""Rebuilds the real-documents set from snapshots of its sources.

    python eval/real/build.py [--mirrors /work/.mirror] [--out eval/real/built]

No document text is kept in the repository: docs.jsonl holds each document's recipe in `source`
(the repository, the commit, the path, an optional line range "a-b", `rebuild` and the `sha256`
of the text as it was labelled), and this script writes the texts from local snapshots of the
sources, each a git directory found at MIRRORS/<owner>+<name>/repo (bare, or a clone whose
.git is there). The recipes (`rebuild`):

- `file`: the file's bytes at the commit, or its lines a-b (1-based, inclusive);
- `eml`: the raw message, written to OUT/files/<id>.eml;
- `pasted`: the message as a person pastes it: its From, To, Cc, Date and Subject lines, a blank
  line, then the plain-text body;
- `irc`: one line of an IRC log without its "[HH:MM] <nick> " prefix.

A PDF or a raw message is written to OUT/files/ (its `file` in docs.jsonl is relative to OUT);
every other text goes into OUT/docs.jsonl, which holds every document with its text. Every
rebuilt text or file is compared with its recorded sha256; a source that is missing or a text
that differs is reported and the exit status is 1.
"""

# ruff: noqa: S603, S607 (git is run from a fixed argument list on a snapshot the user names)
from __future__ import annotations

import argparse
import email
import email.policy
import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
PASTED_HEADERS = ("From", "To", "Cc", "Date", "Subject")
IRC_PREFIX = re.compile(rb"^\[\d\d:\d\d\] <[^>]+> ")


def git_dir(mirrors: Path, repo: str) -> Path:
    """The git directory of a repository's snapshot, or a LookupError saying how to get it."""
    root = mirrors / repo.replace("/", "+") / "repo"
    for candidate in (root / ".git", root):
        if (candidate / "HEAD").is_file():
            return candidate
    raise LookupError(f"no snapshot of {repo} under {mirrors} (fetch github:{repo} first)")


def git_show(git: Path, commit: str, path: str) -> bytes:
    command = ["git", f"--git-dir={git}", "show", f"{commit}:{path}"]
    return subprocess.run(command, check=True, capture_output=True).stdout


def cut_lines(raw: bytes, lines: str | None) -> bytes:
    """Lines "a-b" (1-based, inclusive) of the file, or all of it."""
    if not lines:
        return raw
    first, _, last = lines.partition("-")
    return b"".join(raw.splitlines(keepends=True)[int(first) - 1 : int(last or first)])


def pasted(raw: bytes) -> bytes:
    """A message as a person pastes it into a chat or a note: a few header lines and the body."""
    message = email.message_from_bytes(raw, policy=email.policy.default)
    head = [f"{name}: {' '.join(str(message[name]).split())}" for name in PASTED_HEADERS if message[name]]
    part = message.get_body(preferencelist=("plain",))
    body = part.get_content() if part is not None else ""
    return ("\n".join(head) + "\n\n" + body).encode()


def irc_message(raw: bytes) -> bytes:
    """One IRC log line as the speaker wrote it: the time and the nick are the document's fields."""
    line = raw.rstrip(b"\n")
    if not IRC_PREFIX.match(line):
        raise ValueError(f"not an IRC message line: {line[:60]!r}")
    return IRC_PREFIX.sub(b"", line) + b"\n"


def as_is(raw: bytes) -> bytes:
    return raw


RECIPES: dict[str, Callable[[bytes], bytes]] = {"file": as_is, "eml": as_is, "pasted": pasted, "irc": irc_message}


def rebuild(source: dict[str, Any], mirrors: Path) -> bytes:
    """The bytes of one document, made from its source by its recipe and checked against its sha256."""
    recipe = RECIPES.get(source.get("rebuild", ""))
    if recipe is None:
        raise ValueError(f"unknown recipe {source.get('rebuild')!r}; one of {sorted(RECIPES)}")
    raw = git_show(git_dir(mirrors, source["repo"]), source["commit"], source["path"])
    data = recipe(cut_lines(raw, source.get("lines")))
    digest = hashlib.sha256(data).hexdigest()
    if digest != source.get("sha256"):
        raise ValueError(f"the rebuilt text differs from the labelled one (sha256 {digest})")
    return data


def build(docs: list[dict[str, Any]], mirrors: Path, out: Path) -> int:
    """Writes OUT/docs.jsonl and OUT/files/; returns how many documents could not be rebuilt."""
    (out / "files").mkdir(parents=True, exist_ok=True)
    failed = 0
    for doc in docs:
        try:
            data = rebuild(doc["source"], mirrors)
        except (LookupError, ValueError, subprocess.CalledProcessError) as exc:
            detail = exc.stderr.decode().strip() if isinstance(exc, subprocess.CalledProcessError) else exc
            print(f"{doc['id']}: not rebuilt: {detail}", file=sys.stderr)
            failed += 1
            continue
        if doc.get("file"):
            (out / doc["file"]).write_bytes(data)
        else:
            doc["text"] = data.decode("utf-8")
    rows = "".join(json.dumps(doc, ensure_ascii=False) + "\n" for doc in docs)
    (out / "docs.jsonl").write_text(rows, encoding="utf-8")
    print(f"wrote {out / 'docs.jsonl'}: {len(docs)} documents, {failed} not rebuilt")
    return failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"), help="folder of <owner>+<name>/repo")
    parser.add_argument("--out", type=Path, default=HERE / "built", help="where the built set goes (kept out of git)")
    args = parser.parse_args()
    docs = [json.loads(line) for line in (HERE / "docs.jsonl").read_text(encoding="utf-8").splitlines() if line]
    return 1 if build(docs, args.mirrors, args.out) else 0


if __name__ == "__main__":
    sys.exit(main())
