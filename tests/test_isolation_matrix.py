"""The isolation matrix: what a caller cannot see is never shown, never changed and never betrayed
by an answer's shape.

Organisation A holds a restricted board category, a colleague's personal documents and memories,
and content its member Mira may see; organisation B holds secrets of its own; A's twin holds only
what Mira may see. Every registered tool, prompt and REST route is called as Mira with the secret
words, hidden names and hidden ids, in A and in the twin: the answers must be the same apart from
ids and times, and hold no secret word. Writes with hidden external ids, facts and entity names
must leave the hidden content as its readers know it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.cache import cache
from django.urls import URLPattern, URLResolver, get_resolver
from pydantic import BaseModel, ConfigDict, Field

from brain.mcp.registry import PROMPTS, TOOLS, ToolOutput, mcp_tool
from memory.documents.ingestion import ingest_documents
from memory.models import Document, Entity, Fact, Mention
from tests.conftest import run_mcp
from tests.isolation_cases import (
    KINDS_OF_LITERALS,
    REST_PROBES,
    Pool,
    Ref,
    Target,
    cases_for,
    id_case_args,
    prompt_target,
    rest_targets,
    target_args,
    tool_target,
)
from tests.isolation_runs import Answer, Side, difference, differential, leaks, missing_id, normalised, pool_of
from tests.isolation_world import KINDS, Sight, Worlds, all_ids, build_worlds, sight_of

pytestmark = pytest.mark.django_db

CALLABLE = [*(f"tool:{name}" for name in sorted(TOOLS)), *(f"prompt:{name}" for name in sorted(PROMPTS))]


@dataclass
class Matrix:
    worlds: Worlds
    a: Side
    twin: Side
    sight: Sight
    pool: Pool


@pytest.fixture(scope="module")
def matrix(django_db_setup: None, django_db_blocker: Any) -> Any:
    """The three organisations, written once for the module and deleted after it."""
    with django_db_blocker.unblock():
        worlds = build_worlds()
        sight_a, sight_twin = sight_of(worlds, worlds.a), sight_of(worlds, worlds.twin)
    a = Side(worlds.a, sight_a, sight_a, twin=False)
    twin = Side(worlds.twin, sight_twin, sight_a, twin=True)
    yield Matrix(worlds, a, twin, sight_a, pool_of(sight_a, sight_twin))
    with django_db_blocker.unblock():
        worlds.delete()


def target_named(name: str) -> Target:
    if name.startswith("tool:"):
        return tool_target(name.removeprefix("tool:"))
    if name.startswith("prompt:"):
        return prompt_target(name.removeprefix("prompt:"))
    return next(t for t in rest_targets() if t.name == name)


def all_targets() -> list[Target]:
    return [*(target_named(name) for name in CALLABLE), *rest_targets()]


def report(failures: list[str], total: int) -> str:
    return f"{len(failures)} of {total} cases leak:\n\n" + "\n\n".join(failures)


# --- the generator covers everything --------------------------------------------------------


def placeholder(value: Any) -> Any:
    if isinstance(value, Ref):
        return f"{value.kind}_1" if value.kind in KINDS else "board"
    if isinstance(value, dict):
        return {k: placeholder(v) for k, v in value.items()}
    if isinstance(value, list):
        return [placeholder(v) for v in value]
    return value


def api_routes(patterns: list[Any] | None = None, prefix: str = "") -> list[str]:
    found = []
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver):
            found += api_routes(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            found.append(prefix + str(pattern.pattern))
    return found


def test_the_generator_builds_valid_cases_for_every_tool_prompt_and_rest_route():
    pool = Pool(hidden={kind: 2 for kind in (*KINDS, *KINDS_OF_LITERALS)}, visible={kind: ["v"] for kind in KINDS})
    for target in all_targets():
        cases = cases_for(target, pool)
        assert cases, target.name
        if not target.tool or target.method:
            continue  # only tools called by name build arguments here
        for case in cases:
            try:
                TOOLS[target.tool].args.model_validate(placeholder(case.args))
            except Exception as exc:
                raise AssertionError(f"{target.name} [{case.label}] builds invalid arguments: {exc}") from exc
    served = {t.path for t in rest_targets()}
    routes = {"/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", r) for r in api_routes() if r.startswith("api/v1/")}
    undocumented = routes - served - {"/api/v1/schema/", "/api/v1/docs/", "/api/v1/redoc/"}
    assert not undocumented, f"REST routes the matrix does not reach: {sorted(undocumented)}"
    assert {t.tool for t in rest_targets() if t.tool} <= set(TOOLS)


# --- reads and writes: the same answers as in the twin, no secret word ----------------------


@pytest.mark.parametrize("name", CALLABLE)
def test_a_member_receives_nothing_that_depends_on_what_they_cannot_see(matrix, name):
    cases = cases_for(target_named(name), matrix.pool)
    failures = [f for case in cases if (f := differential(case, matrix.a, matrix.twin))]
    assert not failures, report(failures, len(cases))


@pytest.mark.parametrize("name", [t.name for t in rest_targets()])
def test_a_rest_caller_receives_nothing_that_depends_on_what_they_cannot_see(matrix, name):
    cases = cases_for(target_named(name), matrix.pool, REST_PROBES)
    failures = [f for case in cases if (f := differential(case, matrix.a, matrix.twin))]
    assert not failures, report(failures, len(cases))


class PeekArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=200)


class PeekOut(ToolOutput):
    documents: int
    titles: str


@pytest.fixture
def leaky_tool() -> Any:
    """A tool that counts and names every document of the organisation, whoever may read it."""

    @mcp_tool("test_peek_at_everything", title="Peek", args=PeekArgs, output=PeekOut)
    def peek(actor: Any, args: PeekArgs) -> PeekOut:
        """Counts and names every document, ignoring access: a planted leak."""
        everything = Document.objects.filter(org=actor.org)
        return PeekOut(documents=everything.count(), titles=", ".join(sorted(d.title for d in everything)))

    yield "test_peek_at_everything"
    TOOLS.pop("test_peek_at_everything")


def test_the_matrix_catches_a_tool_that_counts_and_names_what_its_caller_cannot_see(matrix, leaky_tool):
    cases = cases_for(tool_target(leaky_tool), matrix.pool)
    failures = [f for case in cases if (f := differential(case, matrix.a, matrix.twin))]
    assert len(failures) == len(cases)
    assert all("differs from the twin" in f for f in failures)
    assert all("\n  shows " in f for f in failures), "a hidden title went unnoticed"


# --- enumerated ids: refused exactly like ids that exist nowhere ---------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_hidden_ids_and_the_ids_around_them_are_refused_like_missing_ones(matrix, kind):
    ids = all_ids(kind, matrix.worlds)
    visible = set(matrix.sight.visible[kind].values())
    # Ids are positive: below 1 the words are not an id at all and are refused as such, whatever exists.
    asked = [pk for pk in range(max(1, min(ids) - 3), max(ids) + 4) if pk not in visible]
    slots = [(t, arg) for t in all_targets() for arg in target_args(t) if arg.kind == kind and arg.family]
    assert slots, f"no tool or route takes {kind} ids"
    failures, total = [], 0
    for target, arg in slots:
        nowhere = missing_id(kind, 0)
        expected = normalised(run_with(matrix.a, target, arg, nowhere), asked=nowhere)
        for pk in asked:
            total += 1
            answer = run_with(matrix.a, target, arg, f"{kind}_{pk}")
            if normalised(answer, asked=f"{kind}_{pk}") != expected:
                what = matrix.sight.names.get((kind, pk), "an id of another organisation, or of nothing")
                failures.append(
                    f"{target.name} {arg.name}={kind}_{pk} ({what}):\n"
                    + difference(expected, normalised(answer, asked=f"{kind}_{pk}"))
                )
    assert not failures, report(failures, total)


def run_with(side: Side, target: Target, arg: Any, value: str) -> Answer:
    return side.run(target, side.concrete(id_case_args(target, arg, value)))


# --- the real MCP client, for a sample of the matrix ----------------------------------------


def test_the_mcp_endpoint_gives_a_sample_of_the_matrix_what_execute_gives(matrix, brain_url):
    sample = []
    for name in CALLABLE:
        spec = TOOLS.get(name.removeprefix("tool:"))
        if name in ("tool:health", "tool:get_profile") or (spec is not None and not spec.read_only):
            # health waits a second for a worker; writes would outlive the test; get_profile's usage
            # counts every call made, so a second run of the same calls never shows the same month
            continue
        cases = cases_for(target_named(name), matrix.pool)
        sample += cases[:2] + [c for c in cases if "hidden" in c.label][:2]
    calls = [(case, matrix.a.concrete(case.args)) for case in sample]
    cache.clear()  # as each direct run starts: statistics cached by the cases before, inside rolled-back writes, go

    async def walk(session: Any) -> list[Answer]:
        answers = []
        for case, args in calls:
            name = case.target.name.split(":", 1)[1]
            if case.target.tool:
                result = await session.call_tool(name, args)
                body = None if result.is_error else result.structured_content
                answers.append(Answer(-1 if result.is_error else 200, "", body, result.content[0].text))
            else:
                prompt = await session.get_prompt(name, args)
                answers.append(Answer(200, "", None, prompt.messages[0].content.text))
        return answers

    failures = []
    for (case, args), via_mcp in zip(calls, run_mcp(brain_url, matrix.a.world.tokens["member"], walk), strict=True):
        direct = matrix.a.run(case.target, args)
        if via_mcp.status == -1:  # an error: MCP carries the message only
            direct = Answer(-1, "", None, direct.text)
        if normalised(via_mcp) != normalised(direct) or leaks(via_mcp, args):
            failures.append(
                f"{case.target.name} [{case.label}] {args}: shows {leaks(via_mcp, args)}\n"
                + difference(normalised(direct), normalised(via_mcp))
            )
    assert not failures, report(failures, len(calls))


# --- writes that meet hidden content ---------------------------------------------------------

OWNERS = {"board-memo": "reader", "board-minutes": "reader", "diary": "colleague", "notes": "colleague"}
# The MCP tool always writes source kind mcp, so only hidden documents of that kind share its ids.
HIDDEN_EXTERNAL_IDS = [("mcp", "board-memo"), ("mcp", "diary"), *(("rest", label) for label in OWNERS)]


def write_document(side: Side, interface: str, *, title: str, content: str, external_id: str, source_kind: str) -> Any:
    values = {"title": title, "content": content, "external_id": external_id}
    if interface == "mcp":
        return side.run(tool_target("add_company_knowledge"), values, keep=True)
    return side.run(target_named("rest:POST /api/v1/documents"), {**values, "source_kind": source_kind}, keep=True)


@pytest.mark.parametrize("replay", [False, True], ids=["new content", "the hidden content word for word"])
@pytest.mark.parametrize(("interface", "label"), HIDDEN_EXTERNAL_IDS)
def test_a_hidden_documents_external_id_gives_the_writer_a_separate_document(matrix, interface, label, replay):
    hidden: Document = matrix.worlds.a.items[label]
    owner = OWNERS[label]
    title, content = (hidden.title, hidden.content) if replay else ("Dock rota", "The loading dock opens at 7.")
    kind = hidden.source_kind
    fresh = write_document(matrix.a, interface, title=title, content=content, external_id="fresh-id", source_kind=kind)
    reused = write_document(
        matrix.a, interface, title=title, content=content, external_id=hidden.external_id, source_kind=kind
    )
    assert normalised(reused, asked=hidden.external_id) == normalised(fresh, asked="fresh-id"), (
        "the answer differs from the answer for a fresh external id:\n"
        + difference(normalised(fresh, asked="fresh-id"), normalised(reused, asked=hidden.external_id))
    )
    member = matrix.worlds.a.actor("member").user
    mine = Document.objects.filter(org=matrix.worlds.a.org, owner=member, external_id=hidden.external_id).first()
    assert mine is not None, "no document of the writer's own was made"
    assert mine.pk != hidden.pk, "no document of the writer's own was made"
    assert (mine.version, mine.previous_id) == (1, None), f"made version {mine.version} of the hidden document"
    ingest_documents(document_ids=[mine.pk])
    hidden.refresh_from_db()
    assert hidden.superseded_at is None, "the hidden document was superseded by the writer's"
    found = matrix.a.run(tool_target("search_company_memory"), {"query": hidden.title, "top_k": 20}, owner)
    assert hidden.public_id in {hit["document_id"] for hit in found.body["hits"]}, "its owner no longer finds it"


SUPERSEDING_DOCUMENTS = {
    "a later holder of a hidden role": "Dario Pell became head of Vexmoor Labs on 1 May 2026.",
    "an earlier holder of a hidden role": "Dario Pell became head of Vexmoor Labs on 1 January 2026.",
    "a new value for a hidden price": "The Zorblatt acquisition is priced at $3,900,000.",
}


def hidden_graph(matrix: Matrix) -> dict[str, Any]:
    """The hidden facts and the entities hidden content names, as their readers see them."""
    documents = matrix.worlds.a.documents(hidden=True)
    facts = Fact.objects.filter(document__in=documents)
    named = set(Mention.objects.filter(document__in=documents).values_list("entity_id", flat=True))
    named |= {pk for pair in facts.values_list("subject_id", "object_id") for pk in pair if pk}
    return {
        "facts": {f.statement: (f.superseded_at, f.superseded_by_id, f.valid_from, f.valid_to) for f in facts},
        "entities": {e.pk: (e.name, e.type, e.summary, sorted(e.aliases)) for e in Entity.objects.filter(pk__in=named)},
    }


def changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    return [
        f"{part} {key!r}: {before[part][key]} -> {after[part].get(key)}"
        for part in before
        for key in before[part]
        if before[part][key] != after[part].get(key)
    ]


@pytest.mark.parametrize("content", SUPERSEDING_DOCUMENTS.values(), ids=SUPERSEDING_DOCUMENTS.keys())
def test_a_members_document_never_supersedes_or_reshapes_facts_they_cannot_see(matrix, content):
    before = hidden_graph(matrix)
    write_document(matrix.a, "mcp", title="Leadership note", content=content, external_id="", source_kind="mcp")
    mine = Document.objects.get(org=matrix.worlds.a.org, title="Leadership note")
    ingest_documents(document_ids=[mine.pk])
    changed = changes(before, hidden_graph(matrix))
    own = [(f.statement, f.valid_to, f.superseded_at) for f in Fact.objects.filter(document=mine)]
    assert not changed, "hidden content changed for its readers:\n" + "\n".join(changed)
    assert all(valid_to is None and superseded is None for _, valid_to, superseded in own), (
        f"the writer's own facts were shaped by hidden ones: {own}"
    )


REMEMBERED = {
    "a role over a hidden team": {"content": "Dario Pell is head of Vexmoor Labs.", "subject": "Dario Pell",
                                  "relations": [{"from": "Dario Pell", "to": "Vexmoor Labs", "relation": "head_of"}]},
    "details for a hidden entity": {"content": "Vexmoor Labs is our robotics partner.", "subject": "Vexmoor Labs",
                                    "entities": [{"name": "Vexmoor Labs", "type": "team", "summary": "Robotics"}]},
    "a person known by a hidden full name": {
        "content": "Ms Quorvane chairs the advisory board.", "subject": "Ms Quorvane",
        "entities": [{"name": "Ms Quorvane", "type": "person", "summary": "Chairs the advisory board"}]},
    "an entity with a colleague's personal summary": {
        "content": "Brackwater Mill opens in June.", "subject": "Brackwater Mill",
        "entities": [{"name": "Brackwater Mill", "type": "place", "summary": "The new mill site"}]},
}  # fmt: skip


@pytest.mark.parametrize("memory", REMEMBERED.values(), ids=REMEMBERED.keys())
def test_remembering_changes_nothing_hidden_and_teaches_the_member_nothing(matrix, memory):
    before = hidden_graph(matrix)
    answers = [side.run(tool_target("remember"), memory, keep=True) for side in (matrix.a, matrix.twin)]
    assert normalised(answers[0]) == normalised(answers[1]), difference(normalised(answers[1]), normalised(answers[0]))
    changed = changes(before, hidden_graph(matrix))
    names = [
        memory["subject"],
        *(e["name"] for e in memory.get("entities", [])),
        *(end for r in memory.get("relations", []) for end in (r["from"], r["to"])),
    ]
    read_backs: list[tuple[Target, dict[str, Any]]] = [(tool_target("get_schema"), {})]
    for name in dict.fromkeys(names):
        read_backs += [(tool_target("find_entity"), {"name": name}),
                       (tool_target("explore_entity"), {"entity": name, "include_superseded": True})]  # fmt: skip
    learned = []
    for target, args in read_backs:
        got, expected = (side.run(target, args) for side in (matrix.a, matrix.twin))
        if normalised(got) != normalised(expected) or leaks(got, [memory, args]):
            learned.append(
                f"{target.name} {args}: shows {leaks(got, [memory, args])}\n"
                + difference(normalised(expected), normalised(got))
            )
    problems = (["hidden content changed for its readers:", *changed] if changed else []) + (
        ["the member learned from hidden content:", *learned] if learned else []
    )
    assert not problems, "\n".join(problems)
