import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from brain.infra.env import env_bool, env_int, env_list

ROOT = Path(__file__).resolve().parents[2]


def test_env_helpers_fail_loudly_on_bad_values(monkeypatch):
    monkeypatch.setenv("X_BOOL", "maybe")
    monkeypatch.setenv("X_INT", "ten")
    monkeypatch.setenv("X_RANGE", "70000")
    monkeypatch.setenv("X_LIST", " a, b ,,c ")
    with pytest.raises(ImproperlyConfigured, match="X_BOOL"):
        env_bool("X_BOOL")
    with pytest.raises(ImproperlyConfigured, match="whole number"):
        env_int("X_INT", 1)
    with pytest.raises(ImproperlyConfigured, match="between"):
        env_int("X_RANGE", 1, minimum=1, maximum=65535)
    assert env_list("X_LIST") == ["a", "b", "c"]


def test_production_mode_passes_the_deploy_checks(tmp_path):
    env = dict(
        os.environ,
        SECRET_KEY=secrets.token_urlsafe(60),
        DEBUG="0",
        BRAIN_HTTPS="1",
        ALLOWED_HOSTS="brain.example.com",
        BRAIN_BASE_URL="https://brain.example.com",
        BRAIN_DATA_DIR=str(tmp_path),
        DATABASE_URL="postgresql://brain@db.internal/brain",
    )
    env.pop("BRAIN_TESTING", None)
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_mode_refuses_to_start_without_a_secret_key(tmp_path):
    env = dict(os.environ, DEBUG="0", BRAIN_DATA_DIR=str(tmp_path), DATABASE_URL="postgresql://brain@db/brain")
    env.pop("BRAIN_TESTING", None)
    env.pop("SECRET_KEY", None)
    result = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("BRAIN_OAUTH_METADATA_PRIVATE_HOSTS", "docs.corp.example", "list those hosts in BRAIN_OUTBOUND_ALLOW"),
        ("BRAIN_OUTBOUND_ALLOW", "10.0.0.0/8,http://imap.corp.example", "'http://imap.corp.example' is none of them"),
        ("BRAIN_OUTBOUND_TIMEOUT_SECONDS", "600", "BRAIN_OUTBOUND_TIMEOUT_SECONDS must be between 1 and 60"),
    ],
)
def test_outbound_settings_brain_cannot_use_stop_it_at_start(name, value, said):
    env = dict(os.environ, **{name: value})
    result = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode != 0
    assert said in result.stderr
