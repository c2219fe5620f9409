"""Glossary candidate detection on a small team's text: pure, no database."""

from __future__ import annotations

import pytest

from registers.glossary.candidates import Passage, TermCandidate, find_terms

TEAM_TEXT = [
    "We agreed an SLA (service level agreement) with Northwind for the Falcon Console.",
    "The SLA says a priority one ticket is answered within an hour.",
    "Yesterday Priya checked the SLA report and the mean time to recovery (MTTR) for the quarter.",
    "Our MTTR went down after the sprint where we rewrote the runbook.",
    "A runbook is a checklist the on-call engineer follows during an incident.",
    "Marcus Webb asked whether the runbook covers the Falcon Console login outage.",
    "In March the sprint review moved to the Falcon Console dashboard.",
    "Basically the sprint goal was to cut MTTR in half.",
    "Priya said the next sprint starts after the March release.",
    "Basically every sprint ends with a demo of the Falcon Console to Marcus Webb.",
    "Yesterday the runbook had a step missing for the database failover.",
    "In March we will hire two engineers for the sprint team.",
    "Basically we track MTTR per sprint and publish it with the SLA figures.",
    "Marcus Webb approved the runbook changes yesterday.",
    "Priya keeps the sprint board tidy.",
]
# "pod" means a small team in some passages and a Kubernetes unit in others.
POD_TEAM = [
    "The payments pod has four engineers and a product manager.",
    "Each pod plans its own roadmap and hires its own people.",
    "Our pod owns the checkout experience for shoppers.",
    "The growth pod meets with designers every Thursday morning.",
    "A new engineer joins the onboarding pod for her first month.",
    "The pod lead writes the quarterly goals with the team.",
    "Two people left the search pod, so it is short of staff.",
    "The mobile pod celebrated its launch with a team lunch.",
]
POD_KUBERNETES = [
    "The kubelet restarted the pod after the container ran out of memory.",
    "Kubectl shows the pod stuck in CrashLoopBackOff on node seven.",
    "Each pod mounts the config map as a volume at startup.",
    "The scheduler evicted the pod because the node was under disk pressure.",
    "We set a memory limit of 512 megabytes on every pod in the cluster.",
    "The pod could not pull the container image from the registry.",
    "Liveness probes kill the pod when the health endpoint times out.",
    "The deployment rolls out a new pod before it terminates the old replica.",
]


def passages(texts: list[str]) -> list[Passage]:
    return [Passage(text=t, ref=100 + i) for i, t in enumerate(texts)]


@pytest.fixture(scope="module")
def team_terms() -> dict[str, TermCandidate]:
    return {c.term: c for c in find_terms(passages(TEAM_TEXT))}


@pytest.fixture(scope="module")
def pod_terms() -> dict[str, TermCandidate]:
    return {c.term.lower(): c for c in find_terms(passages(TEAM_TEXT + POD_TEAM + POD_KUBERNETES))}


def test_an_acronym_is_found_with_the_expansion_that_follows_it(team_terms):
    sla = team_terms["SLA"]
    assert sla.kind == "acronym"
    assert sla.count == 4
    assert sla.suggestion == "service level agreement"


def test_an_acronym_is_found_with_the_expansion_that_comes_before_it(team_terms):
    mttr = team_terms["MTTR"]
    assert mttr.kind == "acronym"
    assert mttr.suggestion == "mean time to recovery"


def test_brackets_that_do_not_spell_the_acronym_are_no_suggestion():
    texts = ["The QBR (quarterly review) is on Monday.", "Send the QBR deck (see the list above).", "The QBR ran long."]
    qbr = next(c for c in find_terms(passages(texts)) if c.term == "QBR")
    assert qbr.suggestion == ""


def test_a_capitalised_product_name_is_found_as_a_name(team_terms):
    assert team_terms["Falcon Console"].kind == "name"
    assert team_terms["Falcon Console"].count == 4


def test_people_months_and_sentence_initial_words_are_not_found(team_terms):
    found = {term.lower() for term in team_terms}
    for word in ("priya", "marcus webb", "marcus", "webb", "march", "yesterday", "basically", "in march"):
        assert word not in found


def test_an_ordinary_word_used_far_more_than_in_english_is_a_term_of_art(team_terms):
    assert team_terms["sprint"].kind == "term_of_art"
    assert team_terms["sprint"].count == 8


def test_a_defining_sentence_is_offered_as_the_suggestion(team_terms):
    assert team_terms["runbook"].suggestion == "a checklist the on-call engineer follows during an incident"
    assert team_terms["runbook"].examples[0].sentence == TEAM_TEXT[4]


def test_ordinary_english_words_are_not_terms(team_terms):
    found = {term.lower() for term in team_terms}
    assert not found & {"the", "team", "report", "engineers", "every", "after"}


def test_a_word_used_in_two_different_contexts_has_two_senses(pod_terms):
    pod = pod_terms["pod"]
    assert pod.senses == 2
    sentences = [e.sentence for e in pod.examples]
    assert any(s in POD_TEAM for s in sentences)
    assert any(s in POD_KUBERNETES for s in sentences)


def test_a_word_used_consistently_has_one_sense(pod_terms):
    assert pod_terms["sprint"].senses == 1
    assert pod_terms["runbook"].senses == 1


def test_examples_are_at_most_three_verbatim_sentences_from_different_passages(team_terms):
    sprint = team_terms["sprint"]
    assert len(sprint.examples) == 3
    refs = [e.ref for e in sprint.examples]
    assert len(set(refs)) == 3
    for example in sprint.examples:
        assert example.sentence in TEAM_TEXT[example.ref - 100]


def test_a_long_sentence_is_cut_to_300_characters_around_the_use():
    filler = "and then we talked about lunch plans and weather " * 8
    texts = [f"{filler}before the Zorblax rollout {filler}", "The Zorblax rollout is late.", "Zorblax rollout again."]
    zorblax = next(c for c in find_terms(passages(texts * 2)) if c.term.startswith("Zorblax"))
    long = next(e for e in zorblax.examples if e.ref in (100, 103))
    assert len(long.sentence) <= 300
    assert "Zorblax" in long.sentence
    assert long.sentence in texts[0]


def test_limit_and_min_count_are_respected():
    everything = find_terms(passages(TEAM_TEXT), min_count=2)
    assert len(find_terms(passages(TEAM_TEXT), limit=2, min_count=2)) == 2
    assert all(c.count >= 2 for c in everything)
    assert all(c.count >= 5 for c in find_terms(passages(TEAM_TEXT), min_count=5))
    assert find_terms(passages(TEAM_TEXT), limit=0) == []


def test_the_same_passages_give_the_same_candidates():
    texts = TEAM_TEXT + POD_TEAM + POD_KUBERNETES
    assert find_terms(passages(texts)) == find_terms(passages(texts))


def test_no_passages_give_no_candidates():
    assert find_terms([]) == []


def test_a_capitalised_common_word_is_a_term_when_the_text_says_what_it_stands_for():
    texts = ["We need the MID before the shops go live.", "The MID request is with the acquirer.",
             "A MID is the merchant identifier the acquirer gives each shop.", "The MID is still missing."]  # fmt: skip
    found = {c.term: c for c in find_terms([Passage(t, i) for i, t in enumerate(texts)])}
    assert "merchant identifier" in found["MID"].suggestion
    assert "OK" not in {c.term for c in find_terms([Passage("OK, that is OK. OK then.", 1)] * 3)}
