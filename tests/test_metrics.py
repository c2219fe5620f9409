"""/metrics for Prometheus: who may read it, what it says (parsed with prometheus_client's own parser),
a real Prometheus scraping it, the alert rules and dashboard in deploy/, and request ids in answers."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from brain.infra.metrics import count_call
from conftest import make_org, make_token
from connectors.models import Connection
from memory.documents.saving import add_document
from memory.models import Document
from registers.models import Scan
from tests.conftest import call, free_port
from tests.progress import wait_until

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
TOKEN = "m" * 32


def scrape(**extra: Any) -> dict[str, Any]:
    response = Client().get("/metrics", **extra)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    return {family.name: family for family in text_string_to_metric_families(response.content.decode())}


def value(families: dict[str, Any], name: str, sample: str | None = None, **labels: str) -> float:
    family = families[name]
    for found in family.samples:
        if found.name == (sample or name) and all(found.labels.get(k) == v for k, v in labels.items()):
            return float(found.value)
    raise AssertionError(f"no sample {sample or name} with {labels} in {family.samples}")


def seen(families: dict[str, Any], name: str, sample: str | None = None, **labels: str) -> float:
    """The sample's value, or 0 when it has not been counted yet."""
    try:
        return value(families, name, sample, **labels)
    except (AssertionError, KeyError):
        return 0.0


# --- Who may read it: strangers are refused, whatever they try -------------------------------------------
@pytest.mark.django_db
def test_a_client_on_this_machine_may_scrape_it():
    assert "brain_database_up" in scrape()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "extra",
    [
        {"REMOTE_ADDR": "203.0.113.7"},
        {"REMOTE_ADDR": "10.0.0.5"},  # a private address is still not this machine
        {"REMOTE_ADDR": "::ffff:203.0.113.7"},
        # A stranger through nginx on this machine: the connection is loopback, the client is not.
        {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "203.0.113.7"},
        # ... and one who sends a loopback address of their own: nginx appends theirs after it.
        {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "127.0.0.1, 203.0.113.7"},
        {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_REAL_IP": "203.0.113.7"},
        {"REMOTE_ADDR": "127.0.0.1", "HTTP_FORWARDED": "for=203.0.113.7"},
        {"REMOTE_ADDR": "203.0.113.7", "HTTP_X_FORWARDED_FOR": "127.0.0.1"},
        {"REMOTE_ADDR": "203.0.113.7", "HTTP_AUTHORIZATION": "Bearer "},
        {"REMOTE_ADDR": "203.0.113.7", "HTTP_AUTHORIZATION": f"Bearer {TOKEN}"},  # no token is set
        {"REMOTE_ADDR": "not an address"},
    ],
)
def test_it_refuses_strangers_without_saying_why(extra):
    response = Client().get("/metrics", **extra)
    assert response.status_code == 404
    assert response.content == b"Not Found"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "authorization",
    ["Bearer " + "x" * 32, f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", f"Basic {TOKEN}", TOKEN, f"Bearer  {TOKEN} x"],
)
def test_with_a_token_set_a_wrong_token_is_refused_even_on_this_machine(settings, authorization):
    settings.BRAIN_METRICS_TOKEN = TOKEN
    assert Client().get("/metrics", HTTP_AUTHORIZATION=authorization).status_code == 404
    assert Client().get("/metrics", REMOTE_ADDR="203.0.113.7", HTTP_AUTHORIZATION=authorization).status_code == 404


@pytest.mark.django_db
def test_with_the_token_anyone_may_scrape_it_and_this_machine_still_may_without(settings):
    settings.BRAIN_METRICS_TOKEN = TOKEN
    stranger = {"REMOTE_ADDR": "203.0.113.7", "HTTP_X_FORWARDED_FOR": "203.0.113.7"}
    assert "brain_database_up" in scrape(HTTP_AUTHORIZATION=f"Bearer {TOKEN}", **stranger)
    assert "brain_database_up" in scrape(HTTP_AUTHORIZATION=f"bearer {TOKEN}", **stranger)
    assert "brain_database_up" in scrape()


@pytest.mark.django_db
def test_it_answers_before_host_checks_and_the_https_redirect(settings):
    settings.ALLOWED_HOSTS = ["brain.example.com"]
    settings.SECURE_SSL_REDIRECT = True
    assert "brain_database_up" in scrape(HTTP_HOST="10.1.2.3:8000")


def test_a_short_metrics_token_is_refused_at_start():
    env = {
        "BRAIN_METRICS_TOKEN": "short",
        "SECRET_KEY": "x",
        "BRAIN_TESTING": "1",
        "DATABASE_URL": "postgres://x@localhost/y",
        "PATH": "/usr/bin:/bin",
    }
    done = subprocess.run(
        [str(ROOT / ".venv/bin/python"), "-c", "import django; django.setup()"],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "brain.settings"},
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert "BRAIN_METRICS_TOKEN must be at least 24 characters" in done.stderr


def test_a_metrics_folder_that_does_not_exist_is_refused_at_start(tmp_path):
    env = {
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "missing"),
        "SECRET_KEY": "x",
        "BRAIN_TESTING": "1",
        "DATABASE_URL": "postgres://x@localhost/y",
        "PATH": "/usr/bin:/bin",
        "DJANGO_SETTINGS_MODULE": "brain.settings",
    }
    done = subprocess.run(
        [str(ROOT / ".venv/bin/python"), "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert "which is not a folder; create it (empty) before Brain's processes start" in done.stderr


# --- What it says ---------------------------------------------------------------------------------------
@pytest.mark.django_db
def test_it_counts_calls_by_tool_and_outcome_with_their_latency_refusals_and_credits(org):
    before = scrape()
    count_call(tool="probe_tool", outcome="ok", code="", seconds=0.02, credits=3)
    count_call(tool="probe_tool", outcome="refused", code="out_of_credits", seconds=0.001, credits=0)
    after = scrape()
    for name, sample, labels, grew in [
        ("brain_tool_calls", "brain_tool_calls_total", {"tool": "probe_tool", "outcome": "ok"}, 1),
        ("brain_tool_calls", "brain_tool_calls_total", {"tool": "probe_tool", "outcome": "refused"}, 1),
        ("brain_tool_call_seconds", "brain_tool_call_seconds_count", {"tool": "probe_tool", "outcome": "ok"}, 1),
        ("brain_tool_call_seconds", "brain_tool_call_seconds_bucket", {"tool": "probe_tool", "le": "0.025"}, 1),
        ("brain_refusals", "brain_refusals_total", {"tool": "probe_tool", "code": "out_of_credits"}, 1),
        ("brain_credits_charged", "brain_credits_charged_total", {"tool": "probe_tool"}, 3),
    ]:
        assert seen(after, name, sample, **labels) - seen(before, name, sample, **labels) == grew, (name, labels)


@pytest.mark.django_db(transaction=True)
def test_a_real_call_through_the_meter_is_counted(brain_url):
    org = make_org()
    token = make_token(org).plaintext
    before = scrape()
    ok = ("brain_tool_calls", "brain_tool_calls_total")
    start = seen(before, *ok, tool="get_profile", outcome="ok")
    assert not call(brain_url, token, "get_profile").is_error
    assert value(scrape(), *ok, tool="get_profile", outcome="ok") == start + 1


@pytest.mark.django_db
def test_it_reads_the_queue_failures_syncs_and_outbox_from_the_database(org, actor):
    add_document(actor=actor, title="Waiting", content="Queued for the worker.")
    Document.objects.filter(org=org).update(recorded_at=timezone.now() - timedelta(minutes=10))
    failed = add_document(actor=actor, title="Broken", content="It failed.").document
    Document.objects.filter(pk=failed.pk).update(status=Document.Status.FAILED, error="unreadable")
    connection = Connection.objects.create(
        org=org,
        kind="github",
        name="Code",
        category=failed.category,
        last_error="401 from the source",
        last_sync_at=timezone.now(),
    )
    Scan.objects.create(org=org, register="glossary", finished_at=timezone.now() - timedelta(days=3))
    families = scrape()
    assert value(families, "brain_nightly_scan_age_seconds", register="glossary") >= 3 * 86400
    assert value(families, "brain_nightly_scan_last_finished_timestamp_seconds", register="glossary") > 0
    assert value(families, "brain_documents", status="queued") >= 1
    assert value(families, "brain_documents", status="failed") >= 1
    assert value(families, "brain_ingestion_lag_seconds") >= 600
    assert value(families, "brain_connections_failing", kind="github") >= 1
    assert value(families, "brain_outbox_messages") >= 0
    assert value(families, "brain_database_up") == 1
    connection.delete()


@pytest.mark.django_db
def test_a_database_that_does_not_answer_leaves_its_figures_out_and_says_so(monkeypatch):
    from overview import metrics

    def broken(now):
        raise RuntimeError("the database went away")
        yield

    monkeypatch.setattr(metrics, "READERS", [broken])
    families = scrape()
    assert value(families, "brain_database_up") == 0
    assert "brain_documents" not in families


@pytest.mark.django_db
def test_counters_of_other_processes_are_added_up_from_their_files(tmp_path):
    # A worker's process writes its figures to the shared folder; the scrape reads every file there.
    script = (
        "from prometheus_client import Counter\n"
        "Counter('brain_celery_task_retries', 'x', ['task']).labels(task='probe.task').inc(2)\n"
    )
    for _ in range(2):
        subprocess.run(
            [str(ROOT / ".venv/bin/python"), "-c", script],
            check=True,
            env={"PROMETHEUS_MULTIPROC_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"},
        )
    from brain.infra.metrics import render

    families = {f.name: f for f in text_string_to_metric_families(render(multiproc_dir=str(tmp_path)).decode())}
    assert value(families, "brain_celery_task_retries", "brain_celery_task_retries_total", task="probe.task") == 4


# --- Request ids ----------------------------------------------------------------------------------------
@pytest.mark.django_db(transaction=True)
def test_a_request_id_is_kept_when_sensible_and_made_otherwise(brain_url):
    kept = httpx2.get(f"{brain_url}/healthz", headers={"X-Request-ID": "abc-123.def:9"})
    assert kept.headers["x-request-id"] == "abc-123.def:9"
    for hostile in ["a b", "x" * 129, "évil", "a\tb", ""]:
        made = httpx2.get(f"{brain_url}/healthz", headers=[(b"X-Request-ID", hostile.encode("utf-8"))])
        assert re.fullmatch(r"[0-9a-f]{32}", made.headers["x-request-id"]), hostile
    answered = httpx2.post(f"{brain_url}/mcp", json={}, headers={"X-Request-ID": "mcp-1"})
    assert answered.headers["x-request-id"] == "mcp-1"


@pytest.mark.django_db(transaction=True)
def test_a_stranger_through_a_proxy_on_this_machine_is_refused_over_real_http(brain_url):
    assert httpx2.get(f"{brain_url}/metrics").status_code == 200
    for forwarded in ["203.0.113.7", "127.0.0.1", "127.0.0.1, 203.0.113.7"]:
        refused = httpx2.get(f"{brain_url}/metrics", headers={"X-Forwarded-For": forwarded})
        assert refused.status_code == 404
        assert refused.text == "Not Found"


@pytest.mark.django_db(transaction=True)
def test_an_mcp_call_hands_its_request_id_to_the_task_it_queues(brain_url):
    from celery import signals

    org = make_org()
    token = make_token(org).plaintext
    published: list[dict[str, Any]] = []

    def keep(headers: dict[str, Any] | None = None, **_: Any) -> None:
        published.append(dict(headers or {}))

    signals.before_task_publish.connect(keep, weak=False)
    try:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "add_company_knowledge", "arguments": {"title": "Rota", "content": "Ana on Mondays."}},
        }
        answer = httpx2.post(
            f"{brain_url}/mcp",
            json=body,
            headers={
                "Authorization": f"Bearer {token}",
                "X-Request-ID": "mcp-trace-7",
                "Accept": "application/json, text/event-stream",
            },
        )
        assert answer.status_code == 200, answer.text
        assert "error" not in answer.json(), answer.text
    finally:
        signals.before_task_publish.disconnect(keep)
    ingest = [h for h in published if h.get("task") == "memory.tasks.ingest_document_task"]
    assert ingest, published
    assert ingest[0]["brain_request_id"] == "mcp-trace-7"
    assert ingest[0]["brain_org"] == org.slug


# --- deploy/: the rules and the dashboard name what /metrics exposes ----------------------------------
def exposed_names(families: dict[str, Any]) -> set[str]:
    names = set()
    for family in families.values():
        names.add(family.name)
        names.update(sample.name for sample in family.samples)
        suffixes = {"counter": ["_total"], "histogram": ["_bucket", "_count", "_sum"]}.get(family.type, [])
        names.update(family.name + suffix for suffix in suffixes)
    return names


def named_metrics(expression: str) -> set[str]:
    return set(re.findall(r"\bbrain_[a-z_]+\b", expression))


@pytest.mark.django_db
def test_the_alert_rules_and_the_dashboard_name_only_what_metrics_exposes():
    count_call(tool="probe_tool", outcome="ok", code="", seconds=0.01, credits=0)
    exposed = exposed_names(scrape())
    rules = yaml.safe_load((DEPLOY / "prometheus-alerts.yml").read_text())
    expressions = [rule["expr"] for group in rules["groups"] for rule in group["rules"]]
    assert {rule["alert"] for group in rules["groups"] for rule in group["rules"]} >= {
        "BrainIngestionLagging",
        "BrainConnectorSyncsFailing",
        "BrainErrorRateHigh",
    }
    dashboard = json.loads((DEPLOY / "grafana-dashboard.json").read_text())
    queries = [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]
    assert queries
    for expression in expressions + queries:
        assert named_metrics(expression), expression
        assert named_metrics(expression) <= exposed, (expression, named_metrics(expression) - exposed)


PROMTOOL = shutil.which("promtool")
PROMETHEUS = shutil.which("prometheus")


@pytest.mark.skipif(PROMTOOL is None, reason="promtool is not installed (Debian package prometheus)")
def test_promtool_accepts_the_alert_rules_and_the_scrape_example():
    for args in (
        ["check", "rules", str(DEPLOY / "prometheus-alerts.yml")],
        ["check", "config", "--syntax-only", str(DEPLOY / "prometheus.yml")],
    ):
        done = subprocess.run([str(PROMTOOL), *args], capture_output=True, text=True, cwd=DEPLOY)
        assert done.returncode == 0, done.stdout + done.stderr


# --- A real Prometheus scrapes a running Brain ------------------------------------------------------------
@pytest.mark.skipif(PROMETHEUS is None, reason="prometheus is not installed (Debian package prometheus)")
@pytest.mark.django_db(transaction=True)
def test_a_real_prometheus_scrapes_metrics_and_answers_a_series_back(brain_url, tmp_path):
    org = make_org()
    token = make_token(org).plaintext
    assert not call(brain_url, token, "get_profile").is_error
    port = free_port()
    target = brain_url.removeprefix("http://")
    config = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
        "scrape_configs": [{"job_name": "brain", "static_configs": [{"targets": [target]}]}],
    }
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    proc = subprocess.Popen(
        [
            str(PROMETHEUS),
            f"--config.file={tmp_path / 'prometheus.yml'}",
            f"--storage.tsdb.path={tmp_path / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "prometheus.log").open("w"),
    )
    api = f"http://127.0.0.1:{port}/api/v1"
    try:

        def series(query: str) -> list[dict[str, Any]]:
            try:
                answer = httpx2.get(f"{api}/query", params={"query": query}, timeout=5)
            except httpx2.HTTPError:
                answer = None
            if answer is None or answer.status_code != 200:  # not listening yet, or 503 while it starts
                assert proc.poll() is None, (tmp_path / "prometheus.log").read_text()
                return []
            return list(answer.json()["data"]["result"])

        query = 'brain_tool_calls_total{tool="get_profile",outcome="ok"}'
        wait_until(lambda: bool(series(query)), what="Prometheus to scrape /metrics", within=120)
        assert float(series(query)[0]["value"][1]) >= 1
        assert series('up{job="brain"}')[0]["value"][1] == "1"
        assert float(series("brain_database_up")[0]["value"][1]) == 1
    finally:
        proc.terminate()
        proc.wait(30)


# --- Celery tasks: timed and counted through Celery's own signals ----------------------------------------
def test_tasks_are_timed_by_how_they_ended_and_retries_and_failures_counted():
    from brain.celery import app
    from brain.infra.metrics import registry

    @app.task(bind=True, name="tests.metrics.flaky", max_retries=1)
    def flaky(self):
        if not self.request.retries:
            raise self.retry(countdown=0)
        return "done"

    @app.task(name="tests.metrics.broken")
    def broken():
        raise ValueError("it breaks")

    def figures() -> dict[str, Any]:
        text = registry().get_sample_value
        return {
            "ok": text("brain_celery_task_seconds_count", {"task": "tests.metrics.flaky", "state": "success"}) or 0,
            "retried": text("brain_celery_task_seconds_count", {"task": "tests.metrics.flaky", "state": "retry"}) or 0,
            "retries": text("brain_celery_task_retries_total", {"task": "tests.metrics.flaky"}) or 0,
            "failed": text("brain_celery_task_seconds_count", {"task": "tests.metrics.broken", "state": "failure"})
            or 0,
            "failures": text("brain_celery_task_failures_total", {"task": "tests.metrics.broken"}) or 0,
        }

    before = figures()
    assert flaky.apply().get() == "done"
    assert broken.apply().failed()
    after = figures()
    assert {name: after[name] - before[name] for name in after} == {
        "ok": 1,
        "retried": 1,
        "retries": 1,
        "failed": 1,
        "failures": 1,
    }
