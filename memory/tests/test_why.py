import os
import subprocess
from datetime import date
from io import StringIO

import jsonschema
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone
from pydantic import ValidationError

import memory.mcp_tools  # noqa: F401 - registers the tools
from brain.core.errors import InvalidArgument
from brain.mcp.registry import TOOLS
from brain.models import Category
from conftest import make_user
from memory.code_history.git import GitHistoryError, extract_refs, ingest_git, read_commits
from memory.code_history.why import choose_paths, normalise_path, why_code
from memory.documents.ingestion import ingest_documents
from memory.mcp_tools.code import WhyArgs, WhyOut
from memory.models import Document
from memory.tests.factories import save

pytestmark = pytest.mark.django_db

PRIYA = ("Priya Shah", "priya@example.com")
TOM = ("Tom Lee", "tom@example.com")
TRACE = "    at computeTotal (/app/src/checkout/total.ts:42:7)"


def git(repo, *args, author=PRIYA, when="2026-01-01T09:00:00+00:00"):
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": author[0],
        "GIT_AUTHOR_EMAIL": author[1],
        "GIT_AUTHOR_DATE": when,
        "GIT_COMMITTER_NAME": author[0],
        "GIT_COMMITTER_EMAIL": author[1],
        "GIT_COMMITTER_DATE": when,
    }
    command = ["git", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args]
    return subprocess.run(command, cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def commit(repo, message, files, *, author=PRIYA, when):
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A", author=author, when=when)
    git(repo, "commit", "-q", "-m", message, author=author, when=when)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path):
    path = tmp_path / "shop"
    path.mkdir()
    git(path, "init", "-q")
    shas = {
        "add": commit(
            path,
            "Add checkout total",
            {"src/checkout/total.ts": "export const total = 0\n", "README.md": "shop\n"},
            when="2026-01-10T09:00:00+00:00",
        ),
        "round": commit(
            path,
            "Round totals to cents\n\nRefs PROJ-142.",
            {"src/checkout/total.ts": "export const total = 1\n"},
            author=TOM,
            when="2026-02-05T10:00:00+01:00",
        ),
        "fix": commit(
            path,
            "Fix rounding (#12)\n\nPROJ-142: finance reconciles to the cent, so use banker's rounding.",
            {"src/checkout/total.ts": "export const total = 2\n", "src/checkout/tax.ts": "tax\n"},
            when="2026-03-01T11:00:00+00:00",
        ),
    }
    (path / "docs").mkdir()
    git(path, "mv", "README.md", "docs/README.md", author=TOM, when="2026-03-02T08:00:00+00:00")
    git(
        path,
        "commit",
        "-q",
        "-m",
        "Move the readme, see acme/infra#7 and !45",
        author=TOM,
        when="2026-03-02T08:00:00+00:00",
    )
    shas["move"] = git(path, "rev-parse", "HEAD").strip()
    return path, shas


@pytest.fixture
def loaded(actor, repo):
    path, shas = repo
    first = ingest_git(actor=actor, repo_path=path)
    again = ingest_git(actor=actor, repo_path=path)
    ingest_documents(document_ids=list(Document.objects.filter(org=actor.org).values_list("pk", flat=True)))
    save(
        actor,
        "Payments standup",
        "Priya: PROJ-142 is why totals use banker's rounding; finance reconciles to the cent.",
        source_kind="chat",
    )
    save(actor, "Unrelated ticket", "PROJ-1420 is about the logo colour.", source_kind="ticket")
    return first, again, shas


# --- reading git ------------------------------------------------------------------------------


def test_read_commits_gives_authors_dates_files_renames_and_refs(repo):
    path, shas = repo
    commits = read_commits(path)
    assert [c.sha for c in commits] == [shas["move"], shas["fix"], shas["round"], shas["add"]]
    move, fix, rounding, _ = commits
    assert move.files == ["README.md", "docs/README.md"]
    assert move.refs == ["acme/infra#7", "!45"]
    assert fix.subject == "Fix rounding (#12)"
    assert fix.body.startswith("PROJ-142: finance")
    assert fix.refs == ["#12", "PROJ-142"]
    assert set(fix.files) == {"src/checkout/total.ts", "src/checkout/tax.ts"}
    assert (rounding.author_name, rounding.author_email) == TOM
    assert rounding.authored_at.isoformat() == "2026-02-05T10:00:00+01:00"
    assert {c.repo_name for c in commits} == {"shop"}
    assert [c.sha for c in read_commits(path, max_count=1)] == [shas["move"]]
    assert [c.sha for c in read_commits(path, since=date(2026, 2, 20))] == [shas["move"], shas["fix"]]


def test_repo_name_comes_from_the_origin_remote(repo):
    path, _ = repo
    git(path, "remote", "add", "origin", "git@github.com:acme/shop.git")
    assert read_commits(path, max_count=1)[0].repo_name == "acme/shop"


def test_a_merged_pull_request_lists_the_files_it_brought_in(repo):
    path, _ = repo
    git(path, "checkout", "-q", "-b", "feature")
    commit(path, "Add coupons", {"src/checkout/coupon.ts": "c\n"}, when="2026-03-03T08:00:00+00:00")
    git(path, "checkout", "-q", "main")
    git(
        path,
        "merge",
        "-q",
        "--no-ff",
        "feature",
        "-m",
        "Merge pull request #31 from acme/feature",
        when="2026-03-04T08:00:00+00:00",
    )
    merge = read_commits(path, max_count=1)[0]
    assert merge.refs == ["#31"]
    assert merge.files == ["src/checkout/coupon.ts"]


def test_a_folder_that_is_not_a_repository_is_refused(tmp_path):
    with pytest.raises(GitHistoryError, match="not a git repository"):
        read_commits(tmp_path)
    with pytest.raises(GitHistoryError, match="not a folder"):
        read_commits(tmp_path / "missing")


def test_extract_refs_finds_pull_requests_merge_requests_and_tickets():
    message = "Merge pull request #12 from acme/fix\n\nPR #13, !45, acme/shop#9, ABC-7, UTF-8, x#3, wow!4, #12"
    assert extract_refs(message) == ["#12", "#13", "!45", "acme/shop#9", "ABC-7"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("/app/src/checkout/total.ts:42", "app/src/checkout/total.ts"),
        ("src/checkout/total.ts:42:7", "src/checkout/total.ts"),
        ('  File "/srv/app/brain/models.py", line 12, in save', "srv/app/brain/models.py"),
        ("at Object.<anonymous> (/home/x/repo/src/a.js:10:5)", "home/x/repo/src/a.js"),
        (r"C:\Users\x\repo\src\a.py", "Users/x/repo/src/a.py"),
        ("./src/a.py", "src/a.py"),
        ("webpack:///./src/a.js?abc", "src/a.js"),
        ("/app/main.go:42 +0x1d", "app/main.go"),
        ("at Page (/srv/web/app/(shop)/page.tsx:10:5)", "srv/web/app/(shop)/page.tsx"),
        ("at com.acme.Total.compute(Total.java:42)", "Total.java"),
        ("   at Acme.Total.Compute(Decimal x) in /src/Shop/Total.cs:line 42", "src/Shop/Total.cs"),
        ("/app/models/user.rb:42:in `save'", "app/models/user.rb"),
        ("./", ""),
    ],
)
def test_normalise_path_reads_stack_trace_forms(value, expected):
    assert normalise_path(value) == expected


def test_choose_paths_prefers_exact_then_longest_suffix_then_longer_paths():
    recorded = ["checkout/total.ts", "src/checkout/total.ts", "lib/checkout/total.ts"]
    assert choose_paths(recorded, "src/checkout/total.ts") == ["src/checkout/total.ts"]
    assert choose_paths(recorded, "app/src/checkout/total.ts") == ["src/checkout/total.ts"]
    assert choose_paths(recorded[1:], "total.ts") == ["lib/checkout/total.ts", "src/checkout/total.ts"]


# --- ingesting and asking ---------------------------------------------------------------------


def test_ingest_git_twice_adds_nothing_the_second_time(actor, loaded):
    first, again, shas = loaded
    assert first == {"commits": 4, "new": 4, "unchanged": 0}
    assert again == {"commits": 4, "new": 0, "unchanged": 4}
    document = Document.objects.get(org=actor.org, source_kind="git", external_id=f"shop:{shas['fix']}")
    assert document.title == "Fix rounding (#12)"
    assert document.occurred_at is not None
    assert document.occurred_at.date() == date(2026, 3, 1)
    assert document.metadata["refs"] == ["#12", "PROJ-142"]
    assert document.metadata["author"] == "Priya Shah"
    assert document.content.endswith("Files:\nsrc/checkout/tax.ts\nsrc/checkout/total.ts")


def test_why_code_explains_a_file_from_a_stack_trace(actor, loaded):
    _, _, shas = loaded
    result = why_code(actor=actor, path=TRACE)
    assert result.path == "app/src/checkout/total.ts"
    assert result.matched_paths == ["src/checkout/total.ts"]
    assert [c.sha for c in result.commits] == [shas["fix"], shas["round"], shas["add"]]
    assert result.total_commits == 3
    assert result.commits[0].refs == ["#12", "PROJ-142"]
    assert [(c.title, c.refs) for c in result.conversations] == [("Payments standup", ["PROJ-142"])]
    assert "banker's rounding" in result.conversations[0].snippet
    assert [(p.name, p.commits) for p in result.people] == [("Priya Shah", 2), ("Tom Lee", 1)]


def test_the_tool_renders_commits_conversations_and_people(actor, loaded):
    _, _, shas = loaded
    spec = TOOLS["why_code"]
    assert spec.read_only
    assert spec.idempotent
    assert spec.scope == "read"
    out = spec.fn(actor, WhyArgs(path=TRACE, limit=2))
    assert isinstance(out, WhyOut)
    jsonschema.validate(out.model_dump(mode="json"), spec.output_schema())
    assert set(spec.input_schema()["properties"]) == {"path", "repo", "limit", "as_of"}
    text = out.to_text()
    assert f"- 2026-03-01 {shas['fix'][:7]} Priya Shah: Fix rounding (#12, PROJ-142)" in text
    assert f"- 2026-02-05 {shas['round'][:7]} Tom Lee: Round totals to cents (PROJ-142)" in text
    assert "2 of 3 recorded commits" in text
    assert "Payments standup" in text
    assert "People: Priya Shah (2 commits), Tom Lee (1 commit)" in text
    assert "not a judgement" in text


def test_tool_arguments_are_limited():
    assert WhyArgs(path="a.py", limit=500).limit == 50
    with pytest.raises(ValidationError):
        WhyArgs.model_validate({"path": "a.py", "branch": "main"})
    with pytest.raises(ValidationError):
        WhyArgs(path="a" * 1001)


def test_a_suffix_of_a_recorded_path_finds_it(actor, loaded):
    result = why_code(actor=actor, path="tax.ts")
    assert result.matched_paths == ["src/checkout/tax.ts"]
    assert len(result.commits) == 1


def test_repo_alone_lists_its_latest_commits(actor, loaded):
    _, _, shas = loaded
    result = why_code(actor=actor, repo="shop", limit=2)
    assert [c.sha for c in result.commits] == [shas["move"], shas["fix"]]
    assert result.total_commits == 4
    assert why_code(actor=actor, repo="elsewhere").commits == []


def test_a_repository_named_by_its_remote_is_found_by_name_or_url(actor, repo):
    path, shas = repo
    git(path, "remote", "add", "origin", "https://github.com/acme/shop.git")
    ingest_git(actor=actor, repo_path=path, max_count=1)
    ingest_documents(document_ids=list(Document.objects.filter(org=actor.org).values_list("pk", flat=True)))
    for name in ("shop", "acme/shop", "https://github.com/acme/shop.git"):
        assert [c.sha for c in why_code(actor=actor, repo=name).commits] == [shas["move"]]
    assert why_code(actor=actor, path="README.md", repo="acme/shop").commits[0].repo == "acme/shop"


def test_a_reader_of_no_category_gets_an_empty_answer(actor, loaded):
    Category.objects.filter(org=actor.org).update(restricted=True)
    assert why_code(actor=actor, path=TRACE).commits == []


def test_another_organisation_sees_nothing(loaded, other_org_actor):
    save(other_org_actor, "Their standup", "PROJ-142 is theirs too.", source_kind="chat")
    result = why_code(actor=other_org_actor, path=TRACE)
    assert result.commits == []
    assert result.conversations == []
    assert result.people == []


def test_neither_path_nor_repo_says_what_to_pass(actor):
    with pytest.raises(InvalidArgument, match="Pass path"):
        why_code(actor=actor)
    with pytest.raises(InvalidArgument, match="does not name a file"):
        why_code(actor=actor, path="./")


def test_an_unknown_path_is_an_answer_not_an_error(actor, loaded):
    out = TOOLS["why_code"].fn(actor, WhyArgs(path="src/nowhere.py"))
    assert isinstance(out, WhyOut)
    assert out.commits == []
    assert out.people == []
    assert out.to_text().startswith("No recorded commits, pull requests or conversations touch src/nowhere.py")


def test_as_of_before_the_commits_were_recorded_finds_nothing(actor, loaded):
    assert why_code(actor=actor, path=TRACE, as_of=date(2020, 1, 1)).commits == []
    assert len(why_code(actor=actor, path=TRACE, as_of=timezone.now().date()).commits) == 3


# --- the command ------------------------------------------------------------------------------


def run(*args):
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue()


def test_the_command_shows_progress_saving_and_ingesting_and_how_to_follow_up(org, repo, tmp_path, settings):
    settings.DATA_DIR = tmp_path / "data"
    path, _ = repo
    make_user(org, role="admin")
    out, err = StringIO(), StringIO()
    call_command("ingest_git", str(path), "--org", org.slug, "--wait", stdout=out, stderr=err)
    saving, ingesting = err.getvalue().rsplit("saving:", 1)[1].split("ingesting:", 1)
    assert "100%|" in saving
    assert "4/4 [" in saving
    assert ingesting.rsplit("ingesting:", 1)[-1].lstrip().startswith("100%|")
    assert "4/4 [" in ingesting
    assert "4 commits, 4 new, 0 unchanged from shop, 0 failed, 0 waiting" in out.getvalue()
    queued = StringIO()
    call_command("ingest_git", str(path), "--org", org.slug, "--no-progress", stdout=queued, stderr=StringIO())
    assert f"Follow the ingestion: manage.py ingestion status --org {org.slug}" in queued.getvalue()


def test_the_command_ingests_and_summarises(org, repo, tmp_path, settings):
    settings.DATA_DIR = tmp_path / "data"
    path, _ = repo
    make_user(org, role="admin")
    out = run("ingest_git", str(path), "--org", org.slug, "--wait", "--no-progress")
    assert "4 commits, 4 new, 0 unchanged from shop, 0 failed" in out
    assert set(Document.objects.filter(org=org).values_list("status", flat=True)) == {"ready"}
    again = run("ingest_git", str(path), "--org", org.slug, "--max-count", "2")
    assert "2 commits, 0 new, 2 unchanged from shop (queued for the worker)" in again
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(CommandError, match="not a git repository"):
        run("ingest_git", str(plain), "--org", org.slug)
