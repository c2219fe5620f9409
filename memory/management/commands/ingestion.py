from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Count

from brain.core.services import actor_for_user
from brain.models import Membership, Organisation
from memory.documents.ingestion import pause_ingestion, resume_ingestion, retry_document, sweep_stuck_documents
from memory.models import Document


class Command(BaseCommand):
    help = "Pause, resume, inspect or retry an organisation's ingestion; sweep stuck documents."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["pause", "resume", "status", "retry-failed", "sweep"])
        parser.add_argument("--org", help="Organisation slug (not needed for sweep)")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["action"] == "sweep":
            self.stdout.write(f"re-queued {sweep_stuck_documents(queued_grace_seconds=0)} document(s)")
            return
        org = Organisation.objects.filter(slug=opts["org"] or "").first()
        if org is None:
            raise CommandError("Give --org with an existing organisation slug.")
        if opts["action"] == "pause":
            pause_ingestion(actor=None, org=org)
            self.stdout.write(f"ingestion paused for {org.slug}; new documents will wait")
        elif opts["action"] == "resume":
            self.stdout.write(
                f"ingestion resumed for {org.slug}; {resume_ingestion(actor=None, org=org)} waiting document(s) queued"
            )
        elif opts["action"] == "retry-failed":
            admin = Membership.objects.filter(org=org, role="admin").select_related("user").first()
            if admin is None:
                raise CommandError(f"{org.slug} has no admin to act as.")
            actor = actor_for_user(org=org, user=admin.user, via="command")
            failed = Document.objects.filter(org=org, status="failed").values_list("pk", flat=True)
            for document_id in failed:
                retry_document(actor=actor, document_id=document_id)
            self.stdout.write(f"{len(failed)} failed document(s) queued again")
        else:
            counts = dict(Document.objects.filter(org=org).values_list("status").annotate(n=Count("pk")))
            state = "paused" if org.ingestion_paused_at else "running"
            self.stdout.write(
                f"{org.slug}: ingestion {state}; " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
            )
