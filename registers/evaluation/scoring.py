"""The counts for each document and the figures read off them, per split and source kind; and, for a
reader fixing the extractor, each document's misses and extra output. Pure functions; no database."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from registers.evaluation.checks import has_markup, holds_answer, invented_years, junk_reason, match_values
from registers.evaluation.matching import (
    FIRST_PERSON,
    HEADER_LINE,
    TURN_LABEL,
    Derived,
    Doc,
    _day,
    _norm,
    labelled_entity_kind,
    match_facts,
    match_promises,
    time_correct,
)

SPLITS = ("dev", "heldout", "all")


@dataclass
class Tally:
    """Counts for one group of documents; the figures are read off them."""

    documents: int = 0
    labelled_facts: int = 0
    derived_facts: int = 0
    matched_facts: int = 0  # text and subject
    matched_text_only: int = 0
    right_fact_kind: int = 0
    times: int = 0
    right_times: int = 0
    entities: int = 0
    entities_found: int = 0
    right_entity_kind: int = 0
    labelled_promises: int = 0
    derived_promises: int = 0
    matched_promises: int = 0
    right_due: int = 0
    header_facts: int = 0
    turn_label_facts: int = 0
    first_person_facts: int = 0
    duplicate_promises: int = 0
    duplicate_documents: int = 0
    duplicate_facts: int = 0
    derived_entities: int = 0
    junk_entities: int = 0
    markup_facts: int = 0
    markup_entities: int = 0
    snippets: int = 0
    markup_snippets: int = 0
    invented_year_facts: int = 0
    labelled_values: int = 0
    derived_values: int = 0
    found_values: int = 0
    questions: int = 0
    answer_top1: int = 0
    answer_top3: int = 0
    answer_in_snippets: int = 0
    card_claims: int = 0  # cards that give an answer (answered or disputed)
    answer_in_card: int = 0  # the card's sentence holds the labelled answer
    source_in_card: int = 0  # the card's answer comes from a passage that holds it
    kept_documents: int = 0  # documents listed after the relevance floor, summed
    answer_listed: int = 0  # a passage listed after the floor holds the labelled answer

    def add(self, other: Tally) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def figures(self) -> dict[str, Any]:
        def share(part: int, whole: int) -> float | None:
            return round(part / whole, 3) if whole else None

        per_100 = 100 / self.documents if self.documents else 0.0
        return {
            "documents": self.documents,
            "time_accuracy": share(self.right_times, self.times),
            "fact_precision": share(self.matched_facts, self.derived_facts),
            "fact_recall": share(self.matched_facts, self.labelled_facts),
            "fact_recall_text_only": share(self.matched_text_only, self.labelled_facts),
            "fact_kind_accuracy": share(self.right_fact_kind, self.matched_facts),
            "entity_found": share(self.entities_found, self.entities),
            "entity_kind_accuracy": share(self.right_entity_kind, self.entities),
            "promise_precision": share(self.matched_promises, self.derived_promises),
            "promise_recall": share(self.matched_promises, self.labelled_promises),
            "due_accuracy": share(self.right_due, self.matched_promises),
            "duplicate_promises_per_100": round(self.duplicate_promises * per_100, 1),
            "duplicate_documents_per_100": round(self.duplicate_documents * per_100, 1),
            "duplicate_facts_per_100": round(self.duplicate_facts * per_100, 1),
            "header_facts": self.header_facts,
            "turn_label_facts": self.turn_label_facts,
            "first_person_facts": self.first_person_facts,
            "junk_entity_share": share(self.junk_entities, self.derived_entities),
            "junk_entities": self.junk_entities,
            "markup_facts": self.markup_facts,
            "markup_entities": self.markup_entities,
            "markup_snippets": self.markup_snippets,
            "invented_year_facts": self.invented_year_facts,
            "values_found": share(self.found_values, self.labelled_values),
            "answer_top1": share(self.answer_top1, self.questions),
            "answer_top3": share(self.answer_top3, self.questions),
            "answer_in_snippets": share(self.answer_in_snippets, self.questions),
            "card_claims": share(self.card_claims, self.questions),
            "answer_in_card": share(self.answer_in_card, self.questions),
            "source_in_card": share(self.source_in_card, self.questions),
            "answer_listed": share(self.answer_listed, self.questions),
            "documents_listed": round(self.kept_documents / self.questions, 2) if self.questions else None,
            "labelled": {
                "facts": self.labelled_facts,
                "times": self.times,
                "entities": self.entities,
                "promises": self.labelled_promises,
                "values": self.labelled_values,
                "questions": self.questions,
            },
            "derived": {
                "facts": self.derived_facts,
                "promises": self.derived_promises,
                "entities": self.derived_entities,
                "values": self.derived_values,
                "snippets": self.snippets,
            },
        }


def score_document(labels: dict[str, Any], derived: Derived) -> Tally:
    """The counts for one document, duplicates aside (they need the other documents)."""
    facts, wanted = derived.facts, labels.get("facts", [])
    matched = match_facts(facts, wanted, subject=True)
    text_only = match_facts(facts, wanted, subject=False)
    tally = Tally(documents=1, labelled_facts=len(wanted), derived_facts=len(facts), matched_facts=len(matched))
    tally.matched_text_only = len(text_only)
    tally.right_fact_kind = sum(facts[di].kind == wanted[li].get("kind", "fact") for li, di in matched.items())
    for time_label in labels.get("times", []):
        # The fact the expression is written in: the one named by position, else the first holding it.
        holder = time_label.get("fact")
        if holder is None:
            holder = next((i for i, f in enumerate(wanted) if _norm(time_label["text"]) in _norm(f["statement"])), None)
        found = facts[text_only[holder]] if holder is not None and holder in text_only else None
        tally.times += 1
        tally.right_times += time_correct(time_label, found)
    for entity in labels.get("entities", []):
        accepted = entity["kind"] if isinstance(entity["kind"], list) else [entity["kind"]]
        kind = labelled_entity_kind(derived.entities, entity)
        tally.entities += 1
        tally.entities_found += kind is not None
        tally.right_entity_kind += kind in accepted
    promises, wanted_promises = derived.promises, labels.get("promises", [])
    hits = match_promises(promises, wanted_promises)
    tally.labelled_promises, tally.derived_promises, tally.matched_promises = (
        len(wanted_promises),
        len(promises),
        len(hits),
    )
    tally.right_due = sum(promises[di].due_on == _day(wanted_promises[li].get("due_on")) for li, di in hits.items())
    tally.header_facts = sum(bool(HEADER_LINE.search(f.statement)) for f in facts)
    tally.turn_label_facts = sum(bool(TURN_LABEL.match(f.statement)) for f in facts)
    tally.first_person_facts = sum(bool(FIRST_PERSON.search(f.statement)) for f in facts)
    tally.add(read_off(labels, derived))
    return tally


def read_off(labels: dict[str, Any], derived: Derived) -> Tally:
    """The counts of the checks beside the labels: entities that are no names, markup, years nobody
    wrote, recorded values, and the answers the search found."""
    tally = Tally(derived_entities=len(derived.names), derived_values=len(derived.values))
    tally.junk_entities = sum(junk_reason(names, labels, derived.text) is not None for names in derived.names)
    tally.markup_entities = sum(any(has_markup(name) for name in names) for names in derived.names)
    tally.markup_facts = sum(has_markup(f.statement) for f in derived.facts)
    tally.invented_year_facts = sum(bool(invented_years(f, derived.text, derived.moment)) for f in derived.facts)
    tally.labelled_values = len(labels.get("values", []))
    tally.found_values = len(match_values(derived.values, labels.get("values", [])))
    for asked in derived.asked:
        tally.questions += 1
        tally.answer_top1 += any(holds_answer(p, asked.answer) for p in asked.passages[:1])
        tally.answer_top3 += any(holds_answer(p, asked.answer) for p in asked.passages[:3])
        tally.answer_in_snippets += any(holds_answer(s, asked.answer) for s in asked.snippets)
        tally.card_claims += asked.card_status in ("answered", "disputed")
        tally.answer_in_card += holds_answer(asked.card_sentence, asked.answer)
        tally.source_in_card += holds_answer(asked.card_passage, asked.answer)
        tally.kept_documents += asked.kept
        tally.answer_listed += any(holds_answer(p, asked.answer) for p in asked.listed)
        tally.snippets += len(asked.snippets)
        tally.markup_snippets += sum(has_markup(s) for s in asked.snippets)
    return tally


def details_of(labels: dict[str, Any], derived: Derived) -> dict[str, list[str]]:
    """What each count of ``read_off`` counted in one document, for ``--verbose``."""
    junk = ((names, junk_reason(names, labels, derived.text)) for names in derived.names)
    found = match_values(derived.values, labels.get("values", []))
    return {
        "junk entity": [reason for _, reason in junk if reason],
        "entity with markup": [" / ".join(names) for names in derived.names if any(map(has_markup, names))],
        "fact with markup": [f.statement for f in derived.facts if has_markup(f.statement)],
        "invented year": [
            f"{', '.join(map(str, years))}: {f.statement} ({f.valid_from}..{f.valid_to})"
            for f in derived.facts
            if (years := invented_years(f, derived.text, derived.moment))
        ],
        "value not found": [
            f"{v['entity']} / {v['attribute']} = {v['value']}"
            for i, v in enumerate(labels.get("values", []))
            if i not in found
        ],
        "answer not in top 3": [
            f"{a.question} (wanted {a.answer.strip()!r})"
            for a in derived.asked
            if not any(holds_answer(p, a.answer) for p in a.passages[:3])
        ],
        "answer not in the card": [
            f"{a.question} (wanted {a.answer.strip()!r}; card {a.card_status}: {a.card_sentence!r})"
            for a in derived.asked
            if not holds_answer(a.card_sentence, a.answer)
        ],
        "snippet with markup": [s for a in derived.asked for s in a.snippets if has_markup(s)],
    }


def errors_of(labels: dict[str, Any], derived: Derived) -> dict[str, list[str]]:
    """What a reader fixing the extractor wants to see for one document: labels missed, output not
    labelled, time expressions and kinds read wrong."""
    facts, wanted = derived.facts, labels.get("facts", [])
    matched, text_only = match_facts(facts, wanted, subject=True), match_facts(facts, wanted, subject=False)
    out: dict[str, list[str]] = {
        "missed fact": [],
        "extra fact": [],
        "wrong subject": [],
        "wrong time": [],
        "wrong entity kind": [],
        "missed promise": [],
        "extra promise": [],
    }
    for li, label in enumerate(wanted):
        if li in text_only and li not in matched:
            out["wrong subject"].append(
                f"{facts[text_only[li]].subject!r} for {label['subject']!r}: {label['statement']}"
            )
        elif li not in text_only:
            out["missed fact"].append(f"[{label.get('subject')}] {label['statement']}")
    out["extra fact"] = [f"[{f.subject}] {f.statement}" for i, f in enumerate(facts) if i not in text_only.values()]
    for time_label in labels.get("times", []):
        holder = time_label.get("fact")
        if holder is None:
            holder = next((i for i, f in enumerate(wanted) if _norm(time_label["text"]) in _norm(f["statement"])), None)
        found = facts[text_only[holder]] if holder is not None and holder in text_only else None
        if not time_correct(time_label, found):
            got = f"{found.statement!r} ({found.valid_from}..{found.valid_to})" if found else "no fact"
            out["wrong time"].append(f"{time_label['text']!r} = {time_label['value']}: {got}")
    for entity in labels.get("entities", []):
        accepted = entity["kind"] if isinstance(entity["kind"], list) else [entity["kind"]]
        kind = labelled_entity_kind(derived.entities, entity)
        if kind not in accepted:
            out["wrong entity kind"].append(f"{entity['name']}: {kind or 'not found'}, wanted {'/'.join(accepted)}")
    promises, wanted_promises = derived.promises, labels.get("promises", [])
    hits = match_promises(promises, wanted_promises)
    out["missed promise"] = [
        f"[{p['owner']}] {p['what']} (due {p.get('due_on')})" for i, p in enumerate(wanted_promises) if i not in hits
    ]
    out["extra promise"] = [
        f"[{p.owner}] {p.what} (due {p.due_on})" for i, p in enumerate(promises) if i not in hits.values()
    ]
    for li, di in hits.items():
        if promises[di].due_on != _day(wanted_promises[li].get("due_on")):
            out["missed promise"].append(
                f"due {promises[di].due_on}, wanted {wanted_promises[li].get('due_on')}: {promises[di].what}"
            )
    return out


def duplicates(docs: list[Doc], derived: dict[str, Derived]) -> dict[str, Tally]:
    """Per document id, the duplicates charged to it: a promise labelled with the same ``key`` as one
    in an earlier document and derived again as another register entry (one entry with both documents as
    its sources is one promise); a document labelled ``duplicate_of`` an earlier one that
    was stored as a new document, and each of its facts that repeats a fact of that one."""
    charged: dict[str, Tally] = defaultdict(Tally)
    seen_keys: set[object] = set()  # each key, and each (key, register entry) it was derived as
    for doc in docs:
        found = derived.get(doc.id)
        if found is None:
            continue
        wanted = doc.labels.get("promises", [])
        for li, di in match_promises(found.promises, wanted).items():
            key, entry = wanted[li].get("key"), found.promises[di].entry
            if key and key in seen_keys and (entry is None or (key, entry) not in seen_keys):
                charged[doc.id].duplicate_promises += 1
            elif key:
                seen_keys.update((key, (key, entry)))
        original = derived.get(doc.labels.get("duplicate_of") or "")
        if original is not None and found.stored:
            charged[doc.id].duplicate_documents += 1
            earlier = {_norm(f.statement) for f in original.facts}
            charged[doc.id].duplicate_facts += sum(_norm(f.statement) in earlier for f in found.facts)
    return charged


def score(docs: list[Doc], derived: dict[str, Derived]) -> dict[str, dict[str, Tally]]:
    """split -> kind (and "all") -> counts; the splits are dev, heldout and all."""
    extra = duplicates(docs, derived)
    table: dict[str, dict[str, Tally]] = {s: defaultdict(Tally) for s in SPLITS}
    for doc in docs:
        if doc.id not in derived:
            continue
        tally = score_document(doc.labels, derived[doc.id])
        tally.add(extra.get(doc.id, Tally()))
        for split in (doc.split, "all"):
            table[split][doc.kind].add(tally)
            table[split]["all"].add(tally)
    return {split: dict(kinds) for split, kinds in table.items() if kinds}
