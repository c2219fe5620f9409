"""The deterministic commitment extraction, on single sentences and a disfluent transcript (no database)."""

from __future__ import annotations

import datetime

import pytest

from registers.commitments.extraction import CommitmentDraft, Utterance, extract_commitments
from registers.management.commands.eval_commitments import Label, plain_text, score

WEDNESDAY = datetime.date(2025, 6, 4)
TEAMS = ("support", "the billing team")


def drafts(text: str, speaker: str = "Priya", said_on: datetime.date = WEDNESDAY) -> list[CommitmentDraft]:
    return extract_commitments([Utterance(speaker, text, said_on, ref=7)], teams=TEAMS)


def only(text: str, speaker: str = "Priya", said_on: datetime.date = WEDNESDAY) -> CommitmentDraft:
    found = drafts(text, speaker, said_on)
    assert len(found) == 1, found
    return found[0]


def test_a_first_person_promise_belongs_to_the_speaker_in_the_third_person():
    draft = only("I'll send the revised quote to BigCo by Friday.")
    assert draft.owner == "Priya"
    assert draft.what == "Priya will send the revised quote to BigCo by Friday"
    assert draft.quote == "I'll send the revised quote to BigCo by Friday."
    assert (draft.promised_on, draft.ref) == (WEDNESDAY, 7)


def test_by_friday_is_the_coming_friday_not_the_last_one():
    assert only("I'll send the revised quote to BigCo by Friday.").due_on == datetime.date(2025, 6, 6)


def test_a_named_person_undertakes_in_the_third_person_and_next_week_is_due_by_its_friday():
    draft = only("Sam will migrate the billing database next week.", speaker="Ben")
    assert (draft.owner, draft.what) == ("Sam", "Sam will migrate the billing database next week")
    assert draft.due_on == datetime.date(2025, 6, 13)


def test_we_without_a_named_team_is_the_speaker_and_keeps_the_date_words():
    draft = only("we'll have the SOC 2 report to them by 30 June", speaker="Ana")
    assert (draft.owner, draft.what) == ("Ana", "Ana will have the SOC 2 report to them by 30 June")
    assert draft.due_on == datetime.date(2025, 6, 30)


def test_we_resolves_to_a_team_only_when_the_sentence_names_it():
    assert only("We in support will fix the login bug by the end of the week.", speaker="Ana").owner == "support"
    assert only("The billing team will refund the customer tomorrow.", speaker="Ana").owner == "the billing team"


def test_relative_dates_resolve_against_the_utterance_date():
    assert only("I'll call the customer tomorrow.").due_on == datetime.date(2025, 6, 5)
    assert only("I'll call the customer tomorrow.", said_on=datetime.date(2025, 1, 31)).due_on == datetime.date(
        2025, 2, 1
    )
    assert only("Action: Sam to send the minutes by end of the month.").due_on == datetime.date(2025, 6, 30)
    assert only("I'll renew the certificate by 3 May.").due_on == datetime.date(2026, 5, 3)


def test_due_on_stays_empty_when_the_text_gives_no_deadline():
    assert only("I'll send the revised quote to BigCo.").due_on is None


@pytest.mark.parametrize(
    ("text", "owner", "what"),
    [
        ("I'm going to draft the retention policy.", "Priya", "Priya will draft the retention policy"),
        ("I'll make sure the invoices go out.", "Priya", "Priya will make sure the invoices go out"),
        ("I can take that.", "Priya", "Priya will take that"),
        ("Leave it with me.", "Priya", "Priya will take care of it"),
        ("Let me check with legal.", "Priya", "Priya will check with legal"),
        ("Sam is going to book the venue.", "Sam", "Sam will book the venue"),
        ("Sam has agreed to review the contract.", "Sam", "Sam will review the contract"),
        ("Action: Priya to send the notes to the board.", "Priya", "Priya will send the notes to the board"),
        ("I will send you my notes.", "Priya", "Priya will send you their notes"),
    ],
)
def test_each_way_of_undertaking_is_read(text, owner, what):
    draft = only(text, speaker="Priya")
    assert (draft.owner, draft.what) == (owner, what)


@pytest.mark.parametrize(
    "text",
    [
        "Will you send it?",
        "Shall I send it to them",
        "If we get budget I'll hire a contractor.",
        "I hope to finish the report.",
        "Hopefully I'll finish the report.",
        "We could move the launch.",
        "Maybe we should move the launch.",
        "I think we should move the launch.",
        "We decided to launch in May.",
        "We agreed that the launch is in May.",
        "I sent it yesterday.",
        "I was going to send it.",
        "I won't send it.",
        "It will rain tomorrow.",
        "The price will go up.",
        "The system will send a reminder.",
        "It will be done by Friday.",
        "I'll be honest, it is late.",
        "I'll say this about the plan.",
        "I will tell you what, it works.",
        "I'll be there.",
        "I'll just put the lid on.",
        "I'll go first.",
        "We'll discuss the budget later.",
        "I'll do the weekly check-ins every Wednesday at 9:30.",
        "Erik Halvorsen will attend the review on Thursday.",
        "Okapi Print will print and post the paper invoices from January.",
        "Verdant Cloud will raise the node price on 1 February.",
    ],
)
def test_what_is_no_promise_gives_nothing(text):
    assert drafts(text) == []


def test_first_person_with_no_speaker_has_no_owner():
    assert drafts("I'll send the revised quote to BigCo by Friday.", speaker="") == []
    assert only("Action: Priya to send the notes.", speaker="").owner == "Priya"


def test_a_disfluent_transcript_gives_its_promises_once_and_cleanly():
    turns = [
        Utterance("Project Manager", "Um, okay. I'll I'll um send you the uh the deck -- by Monday.", WEDNESDAY, 1),
        Utterance("Marketing", "I'll just -- I'll just hold it. Yeah, yeah.", WEDNESDAY, 2),
        Utterance("Designer", "I will say, uh, it's gonna be tight. Um, I'll I'll be honest.", WEDNESDAY, 3),
        Utterance(
            "Project Manager", "So, um, we -- we're gonna send them one more sample, and they can try it.", WEDNESDAY, 4
        ),
    ]
    found = extract_commitments(turns)
    assert [(d.ref, d.owner, d.what) for d in found] == [
        (1, "Project Manager", "Project Manager will send you the deck by Monday"),
        (4, "Project Manager", "Project Manager will send them one more sample"),
    ]
    assert found[0].due_on == datetime.date(2025, 6, 9)


def test_what_is_one_line_of_at_most_300_characters():
    draft = only("I'll send " + " and ".join(f"the report number {n}" for n in range(40)) + " to BigCo.")
    assert len(draft.what) <= 300
    assert "\n" not in draft.what


def test_the_eval_reads_qmsum_turns_as_plain_transcript_text():
    assert plain_text("I 'll send it {disfmarker} we do n't know .") == "I'll send it -- we don't know."


def test_the_eval_matches_a_draft_to_a_label_by_turn_owner_and_words():
    draft = only("I'll send the revised quote to BigCo.")
    hits, false, missed = score(
        [("m:1", draft), ("m:2", draft)], [Label("m:1", "Priya", "Priya will send the revised quote to BigCo")]
    )
    assert (len(hits), len(false), missed) == (1, 1, [])


def test_a_deadline_named_by_what_was_said_before_takes_its_date():
    tuesday = datetime.date(2025, 12, 2)
    mail = (
        "The QBR with Halvorsen Foods is on 11 December in Bergen. Erik Halvorsen will attend. "
        "I'll prepare the usage report before the QBR."
    )
    assert only(mail, "Marta Ruiz", tuesday).due_on == datetime.date(2025, 12, 11)
    chat = "QBR with Halvorsen is the 11th in Bergen. I'll prepare the usage report before then"
    assert only(chat, "Marta Ruiz", tuesday).due_on == datetime.date(2025, 12, 11)
    # Nothing said before gives the QBR a date: no deadline is made up.
    assert only("I'll prepare the usage report before the QBR.", "Marta Ruiz", tuesday).due_on is None
    # Another event's date is not the QBR's.
    other = "The board meets on 4 December. I'll prepare the usage report before the QBR."
    assert only(other, "Marta Ruiz", tuesday).due_on is None


def test_a_yes_to_a_request_promises_what_was_asked_not_a_pronoun():
    thursday = datetime.date(2025, 11, 13)
    turns = [
        Utterance("Chloé Martin", "Omar, can you get us feedback from the Lyon team?", thursday, ref=1),
        Utterance("Omar Haddad", "Yes, I'll collect their feedback by next Wednesday.", thursday, ref=2),
    ]
    [draft] = extract_commitments(turns)
    assert (draft.owner, draft.ref) == ("Omar Haddad", 2)
    assert draft.what == "Omar Haddad will get feedback from the Lyon team"
    assert draft.due_on == datetime.date(2025, 11, 19)  # the reply's deadline
    assert draft.quote == "Yes, I'll collect their feedback by next Wednesday."
    # "me" is the one who asked; a request made of somebody else leaves the reply's own words.
    mine = [Utterance("Priya Shah", "Could you send me the signed contract, Tom?", thursday),
            Utterance("Tom Becker", "Sure, I'll send it tomorrow.", thursday)]  # fmt: skip
    assert extract_commitments(mine)[0].what == "Tom Becker will send Priya Shah the signed contract"
    theirs = [Utterance("Priya Shah", "Marta, can you send the contract?", thursday),
              Utterance("Tom Becker", "I'll send it tomorrow.", thursday)]  # fmt: skip
    assert extract_commitments(theirs)[0].what == "Tom Becker will send it tomorrow"


def test_action_items_in_notes_moves_and_things_had_done_are_promises():
    monday = datetime.date(2026, 1, 12)
    notes = (
        "- Samuel Osei: renew the staging certificates by Friday.\n"
        "- Tomasz Nowak: write the design doc by 30 January.\n"
        "- Jonas Weber: great quarter overall.\n"
        "- Aiko Tanaka will move the on-call alerts to the new dashboards next week."
    )
    found = {(d.owner, d.what, d.due_on) for d in extract_commitments([Utterance("", notes, monday)])}
    assert found == {
        ("Samuel Osei", "Samuel Osei will renew the staging certificates by Friday", datetime.date(2026, 1, 16)),
        ("Tomasz Nowak", "Tomasz Nowak will write the design doc by 30 January", datetime.date(2026, 1, 30)),
        ("Aiko Tanaka", "Aiko Tanaka will move the on-call alerts to the new dashboards next week",
         datetime.date(2026, 1, 23)),
    }  # fmt: skip
    # A chat line "Name: do this" is the speaker telling Name, not Name's promise.
    assert extract_commitments([Utterance("Priya Shah", "Samuel Osei: renew the certificates", monday)]) == []
    # Moving through a meeting is no promise.
    assert drafts("I'll move on to the next item.") == []
    assert drafts("Let's move to the next point, I'll move it later.") == []


def test_a_yes_to_sam_by_a_nickname_and_a_reply_that_says_more_than_was_asked():
    tuesday = datetime.date(2026, 2, 24)
    turns = [
        Utterance("Priya Shah", "Understood. Sam, can you move the total back to the first page?", tuesday, 1),
        Utterance("Samuel Osei", "Yes, I'll have it in the release on the tenth of March.", tuesday, 2),
    ]
    [draft] = extract_commitments(turns)
    assert (draft.what, draft.due_on) == ("Samuel Osei will move the total back to the first page",
                                          datetime.date(2026, 3, 10))  # fmt: skip
    vaguer = [Utterance("Jonas Weber", "Tom, can you push back?", tuesday, 1),
              Utterance("Tom Becker", "Yes, I'll call their account manager on Friday", tuesday, 2)]  # fmt: skip
    assert extract_commitments(vaguer)[0].what == "Tom Becker will call their account manager on Friday"


def test_action_items_in_minutes_are_promises_by_the_person_they_name():
    wednesday = datetime.date(2026, 1, 7)
    minutes = (
        "- ACTION: Priya Shah to send the audit summary to the board\n"
        "- Tom Becker will draft the hiring plan by 30 January.\n"
        "- [ ] @sam book the venue for the offsite\n"
        "- [x] @jonas renew the domain\n"
        "- Lena: update the onboarding checklist by Friday.\n"
        "- Decision: close the Lyon office."
    )
    found = {(d.owner, d.what, d.due_on) for d in extract_commitments([Utterance("", minutes, wednesday)])}
    assert found == {
        ("Priya Shah", "Priya Shah will send the audit summary to the board", None),
        ("Tom Becker", "Tom Becker will draft the hiring plan by 30 January", datetime.date(2026, 1, 30)),
        ("sam", "sam will book the venue for the offsite", None),
        ("Lena", "Lena will update the onboarding checklist by Friday", datetime.date(2026, 1, 9)),
    }  # fmt: skip


def test_a_reply_under_an_agenda_item_is_said_by_its_name_and_it_is_the_item():
    wednesday = datetime.date(2026, 1, 7)
    # A list item under another is read with it as its lead-in: "<agenda item>: <reply>".
    notes = (
        "- Retire the old status page: Matteo: I will take care of it.\n"
        "- Retire the old status page: Matteo: I think we should wait."
    )
    [draft] = extract_commitments([Utterance("", notes, wednesday)])
    assert (draft.owner, draft.what) == ("Matteo", "Matteo will take care of it: Retire the old status page")
    # Outside a list, "Name: ..." is a topic or a speaker's label, as before.
    assert extract_commitments([Utterance("", "Budget: we will know more in March.", wednesday)]) == []


def test_an_action_item_under_a_pdfs_round_bullet_is_read_as_in_markdown():
    notes = "Action Items\n○ Derek Collison to share the voting results with the oversight committee."
    [draft] = extract_commitments([Utterance("", notes, datetime.date(2025, 3, 21))])
    assert draft.what == "Derek Collison will share the voting results with the oversight committee"


def test_a_remark_after_a_name_in_minutes_is_no_action():
    notes = "- Marco: next-10 survey ready to be published please review the pull request"
    assert extract_commitments([Utterance("", notes, datetime.date(2025, 3, 21))]) == []
