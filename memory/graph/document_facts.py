"""The extraction step of ingestion: a ready document's passages become entities, facts and values.

Deterministic by default (spaCy with the organisation's known entities, dateparser, price-parser,
rapidfuzz); with an LLM configured (``BRAIN_LLM_URL``) the model is asked first and the
deterministic pipeline is the fallback. Re-running keeps the facts found again (ids and history)
and removes the rest.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection
from dataclasses import replace

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memory.access import current
from memory.documents.source import CONVERSATION_KINDS, SourceReading, in_third_person, read_source, read_text
from memory.extraction import (
    MAX_FACTS,
    Block,
    ExtractedEntity,
    ExtractedFact,
    Extraction,
    Kind,
    KnownEntity,
    clean_inline,
    common_word,
    everyday_cells,
    looks_like_person,
    record_names,
    record_values,
    role_kinds,
    short_form,
)
from memory.graph.entities import (
    clean_name,
    context_mentions,
    get_or_create_entity,
    known_for,
    lock_names,
    mention,
)
from memory.graph.twins import release_twins
from memory.graph.writes import FactDraft, embed_drafts, record_facts
from memory.index.serving import Vectors
from memory.models import Chunk, Document, Fact, Mention

logger = logging.getLogger("brain.extract")
MAX_KNOWN = 500
EXTRACTION_WINDOW = 50_000  # characters parsed at once (``_extract_in_windows``)
# "Priya Shah became head of support", "Dana is CEO of Initech": a role that one person holds at a time.
ROLE = re.compile(
    r"\b(?:is|was|became|becomes|remains|remained|serves as|served as|appointed|named|as)\s+(?:the\s+)?(?:new\s+)?"
    r"(?P<role>head|ceo|cto|cfo|coo|cmo|director|manager|lead|president|chair)\s+of\s+(?:the\s+)?"
    r"(?P<target>[A-Za-z][\w&'\- ]{1,40}?)(?=\s+(?:at|from|since|until|till|on|in|for)\b|[.,;:]|$)",
    re.IGNORECASE,
)

# "Anna owns the Northwind account", "Tom is the account owner for Northwind": an account has one owner.
OWNER = re.compile(
    r"\b(?:owns|owned|runs|ran|took over|takes over|has taken over)\s+(?:the\s+)?(?P<target>[A-Za-z][\w&'\- ]{1,40}?)"
    r"\s+account\b|\b(?:is|was|became|becomes|remains|is now)\s+(?:the\s+)?(?:new\s+)?(?:account\s+)?owner\s+"
    r"(?:of|for)\s+(?:the\s+)?(?P<target2>[A-Za-z][\w&'\- ]{1,40}?)(?=\s+account\b|\s+(?:at|from|since|until|on|in)\b"
    r"|[.,;:]|$)",
    re.IGNORECASE,
)


def role_of(statement: str) -> tuple[str, str] | None:
    """(relation, the team, company or account) when the statement gives someone a role, else None."""
    match = ROLE.search(statement)
    if match is not None:
        return f"{match.group('role').lower()}_of", _named(match.group("target"))
    match = OWNER.search(statement)
    if match is not None:
        return "owner_of", _named(match.group("target") or match.group("target2"))
    return None


def _named(words: str) -> str:
    return " ".join(w if w.isupper() else w.capitalize() for w in words.split())


def _known_entities(document: Document, text: str) -> list[KnownEntity]:
    """Entities named in ``text`` as far as every reader of the document can know them, from the
    documents stored before it: a document is read again (``reextract``, a retried ingestion) with
    what was known when it was first read, so reading it again gives what the first reading gave,
    whatever was stored after it and whatever this document itself was once read to name."""
    lowered = text.lower()
    words = set(re.findall(r"\w+", lowered))
    known = []
    own = _own_name(document)
    if own and re.search(rf"(?<!\w){re.escape(own.lower())}(?!\w)", lowered):
        # The organisation's own name is an organisation, whatever the model says.
        known.append(KnownEntity(own, "organisation", fixed=True))
    for entity in known_for(context_mentions(document).filter(document_id__lt=document.pk)):
        # By a name it has, or by the word it goes by: a short form ("Heron") or a person's first name.
        named = any(n.lower() in lowered for n in (entity.name, *entity.aliases) if len(n) > 2)
        first = entity.name.split()[0].lower() if entity.type == "person" and " " in entity.name else None
        if named or (short_form(entity.name, entity.type) or "").lower() in words or first in words:
            known.append(entity)
            if len(known) >= MAX_KNOWN:
                break
    return known


def _own_name(document: Document) -> str:
    name = (document.org.name or "").strip()
    return name if len(name) > 2 else ""


def _extractor():  # type: ignore[no-untyped-def]
    # Loaded on first use: spaCy and dateparser stay out of processes that never extract (web).
    from memory.extraction import extract

    if settings.BRAIN_LLM_URL:
        from memory.graph.llm import LLMError, LLMExtractor  # only with a model configured

        llm = LLMExtractor(
            base_url=settings.BRAIN_LLM_URL, model=settings.BRAIN_LLM_MODEL, api_key=settings.BRAIN_LLM_KEY
        )

        def refined(text, **kw):  # type: ignore[no-untyped-def]
            try:
                return llm.extract(text, **kw)
            except LLMError as exc:
                logger.warning("LLM extraction failed, using the deterministic pipeline: %s", exc)
                return extract(text, **kw)

        return refined
    return extract


def extract_document(*, document_id: int, keep: Collection[int] = (), confirmed: Collection[int] = ()) -> int:
    """(Re)build the extracted facts of one ready document; returns how many were recorded.

    ``keep``: facts a person decided something about elsewhere (an answered contradiction names
    them); one no longer found is retired rather than deleted, as a flagged one is. ``confirmed``:
    facts a person found right on review; one no longer found stays as it is."""
    document = Document.objects.filter(pk=document_id, status=Document.Status.READY).first()
    if document is None or document.source_kind == "remember":
        return 0  # remembered facts are recorded as stated, not extracted
    text, starts, speakers, chunks, blocks = _reading(document)
    if not text.strip():
        return 0
    # Only what someone said is read for facts (headers, quotes, signatures... are blanked out, every
    # offset kept), and relative dates resolve against when the document was said, not saved.
    source = read_source(document, text, passages=speakers)
    body = source.body(text)
    result = _extract_in_windows(
        body,
        starts,
        document_date=source.moment.day,
        known=_known_entities(document, body),
        undated=source.moment.from_upload,
    )
    people = _people_of(source, body if document.source_kind in CONVERSATION_KINDS else "")
    result.entities += _speaker_entities(people, result.entities)
    structured = _typed_by_header(blocks, text, result.entities)
    records = from_records(result.facts, text, starts, blocks, document.title)
    teams = _teams_of(document.org_id, source.speakers())
    drafts, chunk_for = [], {}
    for fact in result.facts:
        speaker = source.speaker_at(fact.char_start, fact.char_end)
        # A bare "date" value that only repeats the validity window is dropped; any other date stays, and
        # so does the date of a one-time happening with a topic ("the office opens on 1 May").
        window = (fact.valid_from, fact.valid_to)
        draft = FactDraft(
            statement=in_third_person(fact.statement, speaker, teams.get(speaker, "")),
            kind=fact.kind,
            subject=_speaking_subject(fact, speaker, teams.get(speaker, "")),
            object=fact.object,
            relation=fact.relation or "",
            single_valued=fact.single_valued or bool(fact.topic),
            valid_from=fact.valid_from,
            valid_to=fact.valid_to,
            topic=fact.topic,
            values=[
                v for v in fact.values if v.key != "date" or v.date not in window or fact.topic or id(fact) in records
            ],
            dated_from_upload=source.moment.from_upload and fact.relative,
        )
        role = role_of(fact.statement) if fact.subject and id(fact) not in records else None
        if role is not None:
            draft.relation, draft.object, draft.single_valued = role[0], role[1], True
        drafts.append(draft)
        owner = max((i for i, start in enumerate(starts) if start <= fact.char_start), default=0)
        if chunks:
            chunk_for[len(drafts) - 1] = chunks[owner][0]
    # Before the transaction, as the model may be remote; a fact found again keeps its vector.
    unseen = _not_stored(document, drafts)
    vectors = embed_drafts(document.org_id, [drafts[i] for i in unseen])
    with transaction.atomic():
        # Every name this document links, locked at once in one order (see ``lock_names``).
        names = [e.name for e in result.entities]
        names += [n for d in drafts for n in (d.subject, d.object) if n]
        lock_names(org_id=document.org_id, names=names)
        _keep_fields(document, source)
        roles = role_kinds(text)
        roles.update({p.casefold(): "person" for p in people})  # who speaks, sends, attends or is spoken to
        roles.update(structured)  # names a table's header types ("Team member", "Vendor")
        if _own_name(document):
            roles[_own_name(document).casefold()] = "organisation"
        named, by_name = set(), {}
        for entity in result.entities:
            # The document's own mentions are still there: a name links to the entity it did before.
            confident = any(roles.get(n.casefold()) == entity.type for n in (entity.name, *entity.aliases))
            linked = get_or_create_entity(
                document=document,
                name=entity.name,
                type=entity.type,
                aliases=list(entity.aliases),
                confident=confident,
                locked=True,
            )
            for surface in {entity.name, *entity.aliases}:
                mention(entity=linked, document=document, surface=surface, type=entity.type)
                named.add((linked.pk, clean_name(surface)))
                by_name[surface] = linked
        fresh = sorted(_keep_unchanged(document, drafts, chunk_for, keep, confirmed))
        record_facts(
            document=document,
            drafts=[drafts[i] for i in fresh],
            chunk_for={n: chunk_for[i] for n, i in enumerate(fresh) if i in chunk_for},
            vectors=_vectors_of(document, drafts, fresh, unseen, vectors),
            linked=by_name,
        )
        _forget_other_mentions(document, named)
    return len(drafts)


_FIRST_PERSON_OPENING = re.compile(r"^\W*(?:I|I'(?:ll|m|ve|d)|I’(?:ll|m|ve|d)|my|me)\b", re.IGNORECASE)
_FIRST_PERSON_SUBJECT = re.compile(r"\bI(?:'(?:ll|m|ve|d)|’(?:ll|m|ve|d))?\s+(?!\w+ly\b)")
_WE = re.compile(r"^\W*(?:we|we'(?:ll|re|ve|d)|we’(?:ll|re|ve|d)|our|us)\b", re.IGNORECASE)


def _reading(
    document: Document,
) -> tuple[str, list[int], list[tuple[int, str]], list[tuple[int, str]], list[Block | None]]:
    """The text read for facts, where each piece of it starts, its speakers, the stored passage
    each piece belongs to (``read_text``) and the block it says."""
    rows = list(
        Chunk.objects.filter(document=document)
        .order_by("ordinal")
        .values_list("pk", "text", "speaker", "char_start", "char_end")
    )
    read = read_text(document, rows)
    chunks = [(piece.passage, piece.text) for piece in read.pieces]
    return read.text, read.starts, read.speakers, chunks, [piece.block for piece in read.pieces]


def from_records(
    facts: list[ExtractedFact], text: str, starts: list[int], blocks: list[Block | None], title: str
) -> set[int]:
    """A table row is a record about its subject: the first fact read from a row is about what the
    row names, with a value per cell keyed by its column (``record_values``), never what the sentence
    parser made of "Team: Price per seat: 29 EUR"; a row nothing was read from gets a fact of its own.
    Facts are changed in place (a new one goes in at its place); returns the ids of the record facts."""
    ends = [*starts[1:], len(text)]
    made: set[int] = set()
    for block, start, end in zip(blocks, starts, ends, strict=True):
        if block is None or block.kind != Kind.ROW or block.subject >= len(block.cells):
            continue
        about = record_subject(block.cells[block.subject], title)
        values = record_values(block.header, block.cells, block.subject)
        if not about or not values:
            continue
        inside = [f for f in facts if start <= f.char_start < end]
        for other in inside[1:]:
            other.values = []  # the row's values are the record's, read once
        fact = inside[0] if inside else None
        if fact is None:
            said = text[start:end].strip()
            fact = ExtractedFact(said, "fact", None, None, None, False, None, None, [], start, start + len(said))
            facts.insert(next((i for i, f in enumerate(facts) if f.char_start > start), len(facts)), fact)
        # Amounts and dates first: the fact's value key, which supersession and contradictions compare.
        values.sort(key=lambda v: v.number is None and v.date is None)
        fact.subject, fact.object, fact.relation, fact.topic = about, None, None, ""
        fact.values, fact.single_valued = values, values[0].number is not None or values[0].date is not None
        made.add(id(fact))
    return made


def record_subject(cell: str, title: str) -> str:
    """What a row is about, as a name: its subject cell; a bare number there (a version "1.1", a
    level "2") is that number of what the document is about."""
    name = clean_inline(cell)
    if name and not re.search(r"[^\W\d_]", name):
        return f"{clean_inline(title)} {name}".strip()
    return name


def _speaking_subject(fact: ExtractedFact, speaker: str, team: str) -> str | None:
    """The speaker is the subject of what they say about themselves ("I'll send the quote"), and
    their team of what they say as "we" when it is known; "we" itself is never an entity, so
    otherwise a fact opening with it keeps the subject the sentence names, if any."""
    if speaker and _FIRST_PERSON_OPENING.match(fact.statement):
        return speaker
    said = _FIRST_PERSON_SUBJECT.search(fact.statement)  # "Rota handover: I'm on support, Sam takes over"
    named = fact.statement.find(fact.subject) if fact.subject else -1
    if speaker and said and (named < 0 or said.start() < named):
        return speaker
    if speaker and team and _WE.match(fact.statement):
        return team
    return fact.subject


# A person's relation to the team or company they speak for when they say "we".
TEAM_RELATIONS = ("works_at", "member_of", "works_in", "joined", "part_of", "leads", "head_of")


def _teams_of(org_id: int, speakers: list[str]) -> dict[str, str]:
    """Each speaker's team or company, where memory already says it (a current fact "Priya Shah
    works at Support"): what their "we" stands for. A speaker with none or several keeps "we"."""
    if not speakers:
        return {}
    found: dict[str, set[str]] = {}
    rows = Fact.objects.filter(
        current(),
        org_id=org_id,
        flagged_at__isnull=True,
        relation__in=TEAM_RELATIONS,
        subject__name__in=speakers,
        object__isnull=False,
    ).values_list("subject__name", "object__name")
    for speaker, team in rows[:200]:
        found.setdefault(speaker, set()).add(team)
    return {speaker: next(iter(teams)) for speaker, teams in found.items() if len(teams) == 1}


def _keep_fields(document: Document, source: SourceReading) -> None:
    """What the document's structure says (sender, recipients, subject, date, attendees) and the
    moment it speaks from, kept on the document for its page."""
    read = {**source.fields, "said_on": source.moment.day.isoformat(), "said_on_from": source.moment.origin}
    metadata = document.metadata if isinstance(document.metadata, dict) else {}
    if metadata.get("source") != read:
        Document.objects.filter(pk=document.pk).update(metadata={**metadata, "source": read})


def _typed_by_header(blocks: list[Block | None], text: str, found: list[ExtractedEntity]) -> dict[str, str]:
    """Names in the columns of a table whose header says what they are ("Team member", "Vendor",
    "Approved by"): an entity found under another kind takes the header's, one not found is added,
    and a cell of several names ("Mariam & Stompy") found as one is replaced by them; a cell of
    everyday words in an untyped column ("First Version" under "Comments") is no entity. Returns
    casefolded name -> kind, evidence as strong as role words in the text."""
    lower = frozenset(re.findall(r"\b[a-z][a-z'-]*\b", text))
    typed: dict[str, tuple[str, str]] = {}
    joined: set[str] = set()
    for block in blocks:
        if block is not None and block.kind == Kind.ROW:
            for cell, names, kind in record_names(block.header, block.cells, lower):
                typed.update({name.casefold(): (name, kind) for name in names if name.casefold() not in typed})
                joined |= {cell.casefold()} if len(names) > 1 else set()
            joined |= everyday_cells(block.header, block.cells, block.subject)
    found[:] = [entity for entity in found if entity.name.casefold() not in joined]
    seen: set[str] = set()
    for entity in found:
        called = {n.casefold() for n in (entity.name, *entity.aliases)}
        kinds = {typed[n][1] for n in called if n in typed}
        if len(kinds) == 1:
            entity.type = kinds.pop()
        seen |= called
    found += [ExtractedEntity(name, kind, [name], False) for key, (name, kind) in typed.items() if key not in seen]
    return {key: kind for key, (_, kind) in typed.items()}


def _speaker_entities(people: list[str], found: list[ExtractedEntity]) -> list[ExtractedEntity]:
    """Everyone who speaks in the document, and its sender, is a person of it; so is each recipient
    and attendee it names by a person's full name (not "Support <help@...>" nor a bare address), and
    whoever a chat message is addressed to (``_people_of``)."""
    for entity in found:  # a speaker the model called a place or a company is a person all the same
        if {n.casefold() for n in (entity.name, *entity.aliases)} & {p.casefold() for p in people}:
            entity.type = "person"
    named = {e.name.lower() for e in found} | {a.lower() for e in found for a in e.aliases}
    return [ExtractedEntity(name, "person", [name], False) for name in people if name.lower() not in named]


# "tobwen: it's flaky", "Ilsabet, by friday": a chat message opening with whom it answers.
_ADDRESSED = re.compile(r"^\s*@?(?P<name>[^\W\d][\w-]*)[:,][ \t]+\S")


def _people_of(source: SourceReading, chat: str = "") -> list[str]:
    """The document's people by its structure: speakers, sender, recipients and attendees named in
    full; and in a conversation's text (``chat``), whom each message is addressed to, by a name that
    is no everyday word ("Yes, ...", "Note: ..." address nobody)."""
    listed = [str(n) for key in ("recipients", "attendees") for n in _as_list(source.fields.get(key))]
    full_names = [n for n in listed if len(n.split()) >= 2 and "@" not in n and looks_like_person(n)]
    spoken_to = []
    for segment in source.segments if chat else ():
        found = _ADDRESSED.match(chat, segment.start, segment.end)
        name = found["name"] if found else ""
        if name and not common_word(name) and not (name.isupper() and len(name) <= 4):
            spoken_to.append(name)
    return list(dict.fromkeys([*source.speakers(), *full_names, *spoken_to]))


def _as_list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def windows(starts: list[int], length: int, most: int) -> list[tuple[int, int]]:
    """Spans of ``length`` characters cut at passage starts, each at most ``most`` long unless one
    passage alone is longer: what one parse holds."""
    spans: list[tuple[int, int]] = []
    begin = last = 0
    for start in [*starts[1:], length]:
        if start - begin > most and last > begin:
            spans.append((begin, last))
            begin = last
        last = start
    spans.append((begin, length))
    return spans


def _extract_in_windows(text: str, starts: list[int], **kw: object) -> Extraction:
    """Extract a long document a window of passages at a time: the parser's memory grows with the
    text it holds (about 1 GB for 100,000 characters), so a worker's memory is bounded by
    ``EXTRACTION_WINDOW`` whatever the document's length. A document within one window is parsed
    whole, as before."""
    spans = windows(starts, len(text), EXTRACTION_WINDOW)
    if len(spans) == 1:
        return _extractor()(text, **kw)
    entities: dict[str, ExtractedEntity] = {}
    facts: list[ExtractedFact] = []
    for begin, end in spans:
        if len(facts) >= MAX_FACTS:  # a document yields as many facts as one parse would, in order
            break
        part = _extractor()(text[begin:end], **kw)
        facts += [replace(fact, char_start=fact.char_start + begin) for fact in part.facts]
        for entity in part.entities:
            seen = entities.setdefault(entity.name, entity)
            if seen is not entity:
                seen.aliases = sorted({*seen.aliases, *entity.aliases})
                seen.known = seen.known or entity.known
    return Extraction(entities=list(entities.values()), facts=facts[:MAX_FACTS])


def _key(statement: str, relation: str, valid_from: object, kind: str) -> tuple[object, ...]:
    return (" ".join(statement.split()), relation, valid_from, kind)


def _keep_unchanged(
    document: Document,
    drafts: list[FactDraft],
    chunk_for: dict[int, int],
    keep: Collection[int] = (),
    confirmed: Collection[int] = (),
) -> set[int]:
    """Re-extraction keeps the facts it finds again, with their ids and history; returns the
    positions of the drafts that are new.

    A fact no longer found is deleted, unless it had superseded another: then it is retired
    (superseded now) so the history of what it replaced stays whole. A fact a person decided on
    is never deleted either: flagged (it stays flagged, for its review), retired on review, or in
    ``keep``; it is retired if it was current. One a person found right on review (``confirmed``)
    stays as it is.
    """
    # A statement the document makes twice is two drafts and two facts: each stored one takes one
    # draft, in order, so running again keeps both rather than replacing one of them.
    wanted: dict[tuple[object, ...], list[int]] = {}
    for i, d in enumerate(drafts):
        wanted.setdefault(_key(d.statement, d.relation, d.valid_from, d.kind), []).append(i)
    fresh = set(range(len(drafts)))
    gone = []
    stored = Fact.objects.filter(document=document, source=Fact.Source.EXTRACTED).order_by("pk").select_for_update()
    for fact in stored:
        same = wanted.get(_key(fact.statement, fact.relation, fact.valid_from, fact.kind))
        position = same.pop(0) if same else None
        if position is not None:
            fresh.discard(position)
            draft = drafts[position]
            changed: dict[str, object] = {"chunk_id": chunk_for.get(position)}
            changed["dated_from_upload"] = draft.dated_from_upload
            if fact.topic != drafts[position].topic:  # read again under newer rules: what it states a value of
                changed |= {"topic": drafts[position].topic[:200], "single_valued": drafts[position].single_valued}
            if any(getattr(fact, name) != value for name, value in changed.items()):
                Fact.objects.filter(pk=fact.pk).update(**changed)
        elif fact.pk not in confirmed:
            gone.append(fact.pk)
    if not gone:
        return fresh  # nothing stored is lost (a first extraction): nothing to retire or delete
    replaced_something = set(Fact.objects.filter(superseded_by_id__in=gone).values_list("superseded_by_id", flat=True))
    replaced_something |= _decided(gone, keep)
    Fact.objects.filter(pk__in=replaced_something, superseded_at__isnull=True).update(superseded_at=timezone.now())
    release_twins(list(replaced_something))
    Fact.objects.filter(pk__in=set(gone) - replaced_something).delete()
    return fresh


def _decided(ids: list[int], keep: Collection[int]) -> set[int]:
    """Those of ``ids`` a person decided on: flagged, retired on review (superseded by nothing), or kept."""
    held = Q(flagged_at__isnull=False) | Q(superseded_at__isnull=False, superseded_by__isnull=True) | Q(pk__in=keep)
    return set(Fact.objects.filter(pk__in=ids).filter(held).values_list("pk", flat=True))


def _forget_other_mentions(document: Document, named: set[tuple[int, str]]) -> None:
    """Delete the document's mentions this extraction did not make again, but for the entities
    its facts are about (a fact found again keeps the mentions it was recorded with)."""
    about = {
        pk for pair in Fact.objects.filter(document=document).values_list("subject_id", "object_id") for pk in pair
    }
    stale = [
        pk
        for pk, entity_id, surface in Mention.objects.filter(document=document).values_list(
            "pk", "entity_id", "surface"
        )
        if (entity_id, surface) not in named and entity_id not in about
    ]
    Mention.objects.filter(pk__in=stale).delete()


def _not_stored(document: Document, drafts: list[FactDraft]) -> list[int]:
    """Positions of the drafts no extracted fact of the document states yet: those to embed."""
    rows = Fact.objects.filter(document=document, source=Fact.Source.EXTRACTED)
    stored = {_key(*row) for row in rows.values_list("statement", "relation", "valid_from", "kind")}
    return [i for i, d in enumerate(drafts) if _key(d.statement, d.relation, d.valid_from, d.kind) not in stored]


def _vectors_of(
    document: Document, drafts: list[FactDraft], fresh: list[int], unseen: list[int], vectors: Vectors
) -> Vectors:
    """The vectors of the ``fresh`` drafts, from those made for the ``unseen`` ones; a fact deleted
    meanwhile by another run is embedded here (rare: the model is then called inside the transaction)."""
    where = {position: n for n, position in enumerate(unseen)}
    if all(i in where for i in fresh):
        return vectors.pick(where[i] for i in fresh)
    return embed_drafts(document.org_id, [drafts[i] for i in fresh])
