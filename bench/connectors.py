"""Items synced per second by a connector, against the loopback stand-in its tests use.

    .venv/bin/python -m bench.connectors --items 2000
    .venv/bin/python -m bench.connectors --kind slack --items 2000
    .venv/bin/python -m bench.connectors --kind sentry --items 500
    .venv/bin/python -m bench.connectors --kind imap --items 1000

A throwaway organisation gets a GitHub connection to a stand-in serving ``--items`` issues (one in
four with two comments, one in five a pull request); the first sync reads them all, page by page,
saving each as a document (queued for ingestion, which is not timed here); a second sync with
nothing changed shows the cost of finding that out; then one in ten is edited and synced again.

With ``--kind slack``, a Slack stand-in serves ``--items`` messages in one public channel over
ten days, one in five a thread's first message with two replies (so items are threads and days);
the same three syncs run, the edit touching one in ten messages.

With ``--kind sentry`` the stand-in serves Sentry issues (each read with its first and latest
event, two more requests an issue), and one in ten is resolved before the third sync.

With ``--kind imap``, a mail connection to a real dovecot on loopback (the one its tests start)
holding ``--items`` messages, threads of three, one in fifty with a small PDF attached (read by
the upload reader, a process each); then a sync with nothing new; then one in ten expunged and as
many new ones filed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from email.message import EmailMessage
from typing import TYPE_CHECKING, Any

from bench.mcp_calls import ROOT, setup_environment
from brain.core.actors import Actor

if TYPE_CHECKING:
    from brain.models import Organisation


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--kind", choices=["github", "slack", "sentry", "imap"], default="github")
    args = parser.parse_args()
    env = setup_environment()
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    import django

    django.setup()
    from django.contrib.auth.models import User

    from brain.core.services import actor_for_user, add_member, create_organisation
    from brain.models import Membership

    stamp = int(time.time())
    org = create_organisation(slug=f"bench-connectors-{stamp}", name="Bench connectors", plan="unlimited")
    user = User.objects.create_user(f"bench-connectors-{stamp}", f"bench{stamp}@example.com")
    add_member(org=org, user=user, role=Membership.ADMIN)
    actor = actor_for_user(org=org, user=user, via="command")
    try:
        _run(args, actor, org)
    finally:
        # Throwaway: its documents are saved and never ingested here, and documents left queued
        # would take turns from the next bench that ingests in this data directory.
        org.delete()
        user.delete()


def _run(args: argparse.Namespace, actor: Actor, org: Organisation) -> None:
    from django.conf import settings

    from brain.models import Category
    from connectors import sync
    from connectors.tests.github_server import github_server

    if args.kind == "slack":
        _slack(actor, args.items)
        return
    if args.kind == "sentry":
        _sentry(actor, org, args.items)
        return
    if args.kind == "imap":
        _imap(actor, args.items)
        return
    with github_server() as github:
        settings.BRAIN_GITHUB_API_URL = github.base
        for n in range(1, args.items + 1):
            day, hour = 1 + n // 1000, (n // 40) % 24
            github.add_issue(
                "acme/api",
                n,
                updated=f"2026-11-{day:02d}T{hour:02d}:{n % 60:02d}:00Z",
                pull=n % 5 == 0,
                comments=2 if n % 4 == 0 else 0,
            )
            if n % 4 == 0:
                github.comments[("acme/api", n)] = [
                    {"user": {"login": "sam"}, "created_at": "2026-11-02T11:00:00Z", "body": f"Comment {i}"}
                    for i in range(2)
                ]
        category = Category.objects.get(org=org, slug=Category.DEFAULT_SLUG)
        connection = sync.add_connection(
            actor=actor,
            kind="github",
            name="bench",
            category=category,
            credentials={"token": github.token},
            options={"repositories": "acme/api"},
        )
        print(f"items={args.items} (GitHub issues and pull requests, {args.items // 4} with comments)")
        for label in ("first sync", "nothing changed", "one in ten edited"):
            if label == "one in ten edited":
                for n in range(10, args.items + 1, 10):
                    github.add_issue("acme/api", n, updated=f"2026-12-01T00:00:{n % 60:02d}Z", body=f"Edited {n}")
            started = time.perf_counter()
            outcome = sync.sync_connection(connection.pk)
            seconds = time.perf_counter() - started
            print(
                f"{label:>18}: {outcome.state}, {outcome.saved} saved in {seconds:.2f} s, "
                f"{outcome.saved / seconds:.0f} items/s, {len(github.requests)} requests so far"
            )


def _slack(actor: Actor, count: int) -> None:
    from django.conf import settings

    from brain.models import Category
    from connectors import sync
    from connectors.tests.slack_server import slack_server, ts_at

    with slack_server() as slack:
        settings.BRAIN_SLACK_API_URL = slack.base
        slack.add_user("USAM", "Sam Berg", "sam@example.com")
        slack.add_channel("CBENCH001", "bench")
        stamps = []
        for n in range(count):
            when = ts_at(f"2026-11-{1 + n * 10 // count:02d}T{(n // 60) % 24:02d}:{n % 60:02d}", n % 1000)
            parent = slack.post("CBENCH001", when, "USAM", f"Message {n} about the billing migration")
            stamps.append(when)
            if n % 5 == 0:
                for r in (1, 2):
                    reply = ts_at(f"2026-11-{1 + n * 10 // count:02d}T{(n // 60) % 24:02d}:{n % 60:02d}", 1000 + r)
                    slack.post("CBENCH001", reply, "USAM", f"Reply {r} to {n}", thread_ts=parent["ts"])
        category = Category.objects.get(org=actor.org, slug=Category.DEFAULT_SLUG)
        connection = sync.add_connection(
            actor=actor,
            kind="slack",
            name="bench",
            category=category,
            credentials={"token": slack.token, "signing_secret": "bench"},
            options={"channels": "bench"},
        )
        print(f"messages={count} (Slack, one channel over ten days, {count // 5} threads with two replies)")
        for label in ("first sync", "nothing changed", "one in ten edited"):
            if label == "one in ten edited":
                for n in range(0, count, 10):
                    slack.edit("CBENCH001", stamps[n], f"Edited {n}", at=stamps[n])
            started = time.perf_counter()
            outcome = sync.sync_connection(connection.pk)
            seconds = time.perf_counter() - started
            print(
                f"{label:>18}: {outcome.state}, {outcome.saved} saved in {seconds:.2f} s, "
                f"{outcome.saved / seconds:.0f} items/s, {len(slack.calls)} requests so far"
            )


def _sentry(actor: Any, org: Any, items: int) -> None:
    from django.conf import settings

    from brain.models import Category
    from connectors import sync
    from connectors.tests.sentry_server import sentry_server

    frames = (("src/checkout/total.py", "compute_total"), ("src/checkout/tax.py", "add_tax"))
    with sentry_server() as sentry:
        settings.BRAIN_SENTRY_API_URL = f"{sentry.base}/api/0/"
        for n in range(1, items + 1):
            sentry.add_issue(
                "web", n, last_seen=f"2026-11-{1 + n // 1000:02d}T{(n // 40) % 24:02d}:{n % 60:02d}:00Z", frames=frames
            )
        category = Category.objects.get(org=org, slug=Category.DEFAULT_SLUG)
        connection = sync.add_connection(
            actor=actor,
            kind="sentry",
            name="bench sentry",
            category=category,
            credentials={"token": sentry.token},
            options={"organisation": "acme", "projects": "web"},
        )
        print(f"items={items} (Sentry issues, each with its first and latest event)")
        for label in ("first sync", "nothing changed", "one in ten resolved"):
            if label == "one in ten resolved":
                for n in range(10, items + 1, 10):
                    sentry.add_issue("web", n, last_seen="2026-12-01T00:00:00Z", frames=frames, status="resolved")
            started = time.perf_counter()
            outcome = sync.sync_connection(connection.pk)
            seconds = time.perf_counter() - started
            print(
                f"{label:>20}: {outcome.state}, {outcome.saved} saved in {seconds:.2f} s, "
                f"{outcome.saved / seconds:.0f} items/s, {len(sentry.requests)} requests so far"
            )


def _imap(actor: Any, items: int) -> None:
    from django.contrib.auth.models import Group

    from brain.models import Category
    from connectors import sync
    from connectors.tests.imap_server import imap_server, pdf_saying

    category = Category.objects.create(org=actor.org, slug="mailbox", name="Mailbox", restricted=True)
    readers = Group.objects.create(name=f"{actor.org.slug} mailbox")
    category.groups.add(readers)
    actor.user.groups.add(readers)
    pdf = pdf_saying("Quarterly freight figures")

    def mail(n: int) -> EmailMessage:
        message = EmailMessage()
        message["From"] = f"Person {n % 40} <p{n % 40}@example.com>"
        message["To"] = "Sam <sam@example.com>"
        message["Subject"] = f"Thread {n // 3}" if n % 3 == 0 else f"Re: Thread {n // 3}"
        message["Date"] = f"Mon, {1 + n % 28:02d} Sep 2025 {n % 24:02d}:{n % 60:02d}:00 +0000"
        message["Message-ID"] = f"<m{n}@example.com>"
        if n % 3:
            message["In-Reply-To"] = message["References"] = f"<m{n - n % 3}@example.com>"
        message.set_content(f"Message {n}: the numbers for week {n % 52} are in, and the plan holds.\n" * 5)
        if n % 50 == 0:
            message.add_attachment(pdf, maintype="application", subtype="pdf", filename=f"figures-{n}.pdf")
        return message

    with imap_server() as server:
        server.append_all([mail(n) for n in range(1, items + 1)])
        connection = sync.add_connection(
            actor=actor,
            kind="imap",
            name="bench mail",
            category=category,
            credentials={
                "host": "127.0.0.1",
                "port": str(server.port),
                "username": server.username,
                "password": server.password,
            },
            options={"folders": "INBOX", "tls": "plain"},
        )
        print(f"messages={items} (threads of three, {items // 50} with a PDF attached), dovecot on loopback")
        for label in ("first sync", "nothing new", "a tenth gone, a tenth new"):
            if label == "a tenth gone, a tenth new":
                server.expunge(list(range(10, items + 1, 10)))
                server.append_all([mail(n) for n in range(items + 1, items + items // 10 + 1)])
            started = time.perf_counter()
            outcome = sync.sync_connection(connection.pk)
            seconds = time.perf_counter() - started
            print(
                f"{label:>26}: {outcome.state}, {outcome.saved} saved, {outcome.withdrawn} withdrawn in "
                f"{seconds:.2f} s, {(outcome.saved + outcome.withdrawn) / seconds:.0f} messages/s"
            )


if __name__ == "__main__":
    main()
