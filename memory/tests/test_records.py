"""The records sources write on documents: checked when saved, read and filtered by their declared keys."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from django.db import connection

from brain.core.errors import InvalidArgument
from memory.documents import records
from memory.documents.records import (
    SHAPES,
    CommitRecord,
    MailRecord,
    PullRequestRecord,
    RecordRefused,
    checked_metadata,
    commit_of,
    in_repository,
    numbered,
    pull_request_of,
    read_record,
    repository_of,
    touching,
)
from memory.models import Document
from memory.tests.factories import save

SHA = "a" * 40


# --- checked when saved, without a database --------------------------------------------------


def test_a_record_of_its_shape_is_stored_in_its_declared_names():
    given = {"kind": "commit", "repository": "acme/api", "sha": SHA, "files": ["src/a.py"], "connection": "GitHub"}
    assert checked_metadata(source_kind="connector", metadata=given) == given


def test_the_old_name_of_the_repository_is_stored_as_repository():
    stored = checked_metadata(source_kind="git", metadata={"sha": SHA, "repo": "acme/api"})
    assert stored == {"sha": SHA, "repository": "acme/api"}


def test_a_record_giving_the_repository_twice_differently_is_refused():
    with pytest.raises(RecordRefused, match="repo .* and repository .* differ"):
        checked_metadata(source_kind="git", metadata={"repo": "acme/api", "repository": "acme/web"})


def test_a_field_of_the_wrong_type_is_refused_naming_the_field():
    with pytest.raises(RecordRefused, match="pull_request record's field 'files' is wrong") as refused:
        checked_metadata(source_kind="connector", metadata={"kind": "pull_request", "files": "src/a.py"})
    assert refused.value.details == {"field": "files"}
    assert isinstance(refused.value, InvalidArgument)  # every interface answers it as a 400


def test_a_field_no_shape_declares_is_refused_naming_it():
    with pytest.raises(RecordRefused, match="commit record's field 'repostiory' is wrong: Extra inputs"):
        checked_metadata(source_kind="connector", metadata={"kind": "commit", "repostiory": "acme/api"})


def test_a_wrong_field_inside_a_list_is_named_with_its_place():
    reviews = [{"user": "sam", "state": "APPROVED"}, {"user": "lea", "verdict": "ok"}]
    with pytest.raises(RecordRefused, match="field 'reviews.1.verdict'"):
        checked_metadata(source_kind="connector", metadata={"kind": "pull_request", "reviews": reviews})


def test_a_synced_record_names_a_kind_brain_knows():
    with pytest.raises(RecordRefused, match="field 'kind' is 'tweet'"):
        checked_metadata(source_kind="connector", metadata={"kind": "tweet"})
    with pytest.raises(RecordRefused, match="field 'kind' is missing"):
        checked_metadata(source_kind="connector", metadata={"connection": "GitHub"})


def test_documents_that_hold_no_record_keep_their_metadata_as_given():
    free = {"repo": 3, "kind": "commit", "anything": ["at", "all"]}
    assert checked_metadata(source_kind="api", metadata=free) is free
    assert checked_metadata(source_kind="connector", metadata=None) == {}


def test_a_null_from_the_source_is_a_field_it_does_not_know():
    assert checked_metadata(source_kind="connector", metadata={"kind": "issue", "closed_at": None}) == {"kind": "issue"}


def test_a_mail_keeps_its_sender_under_from():
    stored = checked_metadata(source_kind="connector", metadata={"kind": "mail", "from": "Priya <p@example.com>"})
    assert stored == {"kind": "mail", "from": "Priya <p@example.com>"}
    assert read_record(stored, MailRecord).sender == "Priya <p@example.com>"


# --- read, whatever a row holds ---------------------------------------------------------------


def test_a_row_with_the_old_name_reads_its_repository():
    assert read_record({"repo": "acme/api", "sha": SHA}, CommitRecord).repository == "acme/api"


def test_a_field_not_of_its_shape_reads_as_its_default_and_the_rest_as_stored():
    pull = read_record({"number": "twelve", "repository": "acme/api", "closes": ["acme/api#3"]}, PullRequestRecord)
    assert (pull.number, pull.ref, pull.closes) == (None, "acme/api#", ["acme/api#3"])


def test_metadata_that_is_no_mapping_reads_as_an_empty_record():
    assert read_record(["not", "a", "record"], CommitRecord) == CommitRecord()


def test_every_key_the_filters_use_is_a_declared_field():
    text = Path(records.__file__).read_text()
    used = set(re.findall(r"metadata__([a-z]+(?:_[a-z]+)*)", text)) - {"has_key"}
    declared = {info.alias or name for shape in SHAPES.values() for name, info in shape.model_fields.items()}
    assert used
    assert used <= declared


def test_a_field_no_shape_declares_cannot_be_asked_for():
    with pytest.raises(KeyError):
        records.value(CommitRecord, "repo")
    with pytest.raises(KeyError):
        records.synced("tweet")


def test_numbered_reads_only_qualified_references():
    assert numbered("#12") is None
    assert numbered("acme/api#x") is None
    assert numbered("acme/api#12") is not None


# --- saved and filtered, on the database ------------------------------------------------------


@pytest.mark.django_db
def test_a_wrong_record_is_refused_where_it_is_saved(actor):
    with pytest.raises(InvalidArgument, match="deployment record's field 'state' is wrong"):
        save(actor, "Deployment", "Deployed.", source_kind="connector", metadata={"kind": "deployment", "state": 3})
    assert not Document.objects.filter(org=actor.org).exists()


@pytest.mark.django_db
def test_the_filters_find_records_by_their_declared_keys(actor):
    local = save(
        actor,
        "Fix rounding",
        "Fix rounding",
        source_kind="git",
        external_id="api:1",
        metadata={"sha": SHA, "repo": "acme/api", "files": ["src/total.py"]},
        ingest=False,
    )
    pull = save(
        actor,
        "Pull request acme/api#31: Rounding",
        "Banker's rounding",
        source_kind="connector",
        external_id="github:acme/api#31",
        ingest=False,
        metadata={
            "kind": "pull_request",
            "repository": "acme/api",
            "number": 31,
            "files": ["src/total.py"],
            "reviews": [{"user": "sam", "state": "APPROVED"}],
        },
    )
    other = save(
        actor,
        "Commit acme/web@bbbbbbb: Menu",
        "Menu",
        source_kind="connector",
        external_id="github:web",
        metadata={"kind": "commit", "repository": "acme/web", "sha": "b" * 40},
        ingest=False,
    )
    documents = Document.objects.filter(org=actor.org)
    assert set(documents.filter(in_repository("api"))) == {local, pull}
    assert set(documents.filter(in_repository("ACME/API"))) == {local, pull}
    assert set(documents.filter(touching(["src/total.py"]))) == {local, pull}
    assert not documents.filter(touching([])).exists()
    assert list(documents.filter(numbered("acme/api#31"))) == [pull]
    assert list(documents.filter(records.synced("commit"))) == [other]
    assert set(documents.filter(records.commits())) == {local, other}
    assert set(documents.exclude(records.synced("commit"))) == {local, pull}
    assert (repository_of(local), commit_of(local).sha, commit_of(local).files) == ("acme/api", SHA, ["src/total.py"])
    assert [r.user for r in pull_request_of(pull).reviews] == ["sam"]


@pytest.mark.django_db
def test_the_migration_moves_rows_of_the_old_name_to_repository(actor):
    migration = importlib.import_module("memory.migrations.0021_record_repository")
    old = save(actor, "Fix", "Fix", source_kind="git", external_id="api:1", ingest=False)
    synced = save(actor, "Commit", "Commit", source_kind="connector", external_id="gh:1", ingest=False)
    note = save(actor, "Note", "A note with a repo field of its own.", ingest=False)
    Document.objects.filter(pk=old.pk).update(metadata={"sha": SHA, "repo": "acme/api"})
    both = {"kind": "commit", "sha": SHA, "repo": "acme/api", "repository": "acme/api"}
    Document.objects.filter(pk=synced.pk).update(metadata=both)
    Document.objects.filter(pk=note.pk).update(metadata={"repo": "mine"})
    with connection.cursor() as cursor:
        cursor.execute(migration.FORWARD)
    metadata = dict(Document.objects.filter(org=actor.org).values_list("pk", "metadata"))
    assert metadata[old.pk] == {"sha": SHA, "repository": "acme/api"}
    assert metadata[synced.pk] == {"kind": "commit", "sha": SHA, "repository": "acme/api"}
    assert metadata[note.pk] == {"repo": "mine"}  # not a record: its own field, kept
    with connection.cursor() as cursor:
        cursor.execute(migration.BACKWARD)
    assert Document.objects.get(pk=old.pk).metadata == {"sha": SHA, "repo": "acme/api", "repository": "acme/api"}
