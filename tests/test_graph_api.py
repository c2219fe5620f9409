from datetime import date

import pytest
from rest_framework.test import APIClient

from conftest import make_actor, make_org, make_token
from memory.graph.writes import FactDraft, record_facts
from memory.tests.factories import save

pytestmark = pytest.mark.django_db


@pytest.fixture
def client_and_org(settings):
    settings.BRAIN_EXTRACT_FACTS = False
    org = make_org()
    issued = make_token(org)
    document = save(make_actor(org, issued.token.user), "Org chart", "Priya Shah leads support.")
    record_facts(
        document=document,
        drafts=[
            FactDraft(
                statement="Priya Shah leads support.",
                subject="Priya Shah",
                object="Support",
                relation="leads",
                single_valued=True,
                valid_from=date(2026, 3, 1),
            )
        ],
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.plaintext}")
    return client, org


def test_the_graph_reads_over_rest(client_and_org):
    client, _ = client_and_org
    asked = client.post("/api/v1/ask", {"question": "who leads support?"}, format="json").json()
    assert asked["status"] == "evidence"
    assert asked["claims"][0]["subject"]["name"] == "Priya Shah"
    facts = client.post("/api/v1/facts/search", {"query": "support lead"}, format="json").json()
    assert facts["facts"][0]["statement"] == "Priya Shah leads support."
    entity = client.get("/api/v1/entities?name=priya").json()["entities"][0]
    explored = client.get(f"/api/v1/entities/explore?entity={entity['entity_id']}&limit=5").json()
    assert explored["outgoing"][0]["object"]["name"] == "Support"
    assert client.get("/api/v1/overview").json()["facts"] == 1
    assert client.get("/api/v1/episodes?limit=3").json()["episodes"][0]["title"] == "Org chart"
    assert client.get("/api/v1/timeline?from=2020-01-01").json()["count"] == 1
    assert client.get("/api/v1/values").json()["keys"] == []


def test_remember_and_forget_over_rest(client_and_org):
    client, _ = client_and_org
    stored = client.post("/api/v1/memories", {"content": "The office closes on 24 December."}, format="json").json()
    assert stored["memory_id"].startswith("mem_")
    assert client.delete(f"/api/v1/memories/{stored['memory_id']}").status_code == 200
    again = client.delete(f"/api/v1/memories/{stored['memory_id']}")
    assert again.status_code == 404
    assert "No memory" in again.json()["message"]


def test_bad_dates_and_other_organisations(client_and_org):
    client, _ = client_and_org
    bad = client.get("/api/v1/timeline?from=yesterday-ish")
    assert bad.status_code == 400
    assert "'from'" in bad.json()["message"]
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(make_org()).plaintext}")
    assert stranger.get("/api/v1/entities?name=priya").json()["entities"] == []
