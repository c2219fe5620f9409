"""Brain's settings, all from the environment (see docs/configuration.md)."""

from __future__ import annotations

import os
import secrets
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

from brain.api.groups import OPENAPI_TAGS
from brain.api.introduction import DESCRIPTION as API_DESCRIPTION
from brain.infra.env import env_bool, env_file_values, env_hosts_and_networks, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("BRAIN_DATA_DIR") or BASE_DIR / ".brain-data")
# The launcher writes the embedded services' addresses here, so manage.py finds them too.
_SERVICES = env_file_values(str(DATA_DIR / "services.env"))

DEBUG = env_bool("DEBUG", False)
TESTING = env_bool("BRAIN_TESTING", False)
HTTPS = env_bool("BRAIN_HTTPS", False)


def _secret_key() -> str:
    key = env_str("SECRET_KEY")
    if key:
        return key
    path = DATA_DIR / "secret_key"
    if path.exists():
        return path.read_text().strip()
    if DEBUG or TESTING:
        return secrets.token_urlsafe(50)
    raise ImproperlyConfigured("SECRET_KEY is not set (and no secret_key file was found in BRAIN_DATA_DIR)")


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
# Browser origins allowed to call /mcp (DNS rebinding protection). Empty Origin is always allowed.
BRAIN_ALLOWED_ORIGINS = env_list(
    "BRAIN_ALLOWED_ORIGINS", ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
)
# The public URL people and assistants use; printed in client configuration.
BRAIN_BASE_URL = env_str("BRAIN_BASE_URL", f"http://127.0.0.1:{env_int('BRAIN_PORT', 8000)}").rstrip("/")
# Embeddings: "minilm" (offline, default) or "openai" (any OpenAI-compatible /embeddings endpoint).
BRAIN_EMBEDDER = env_str("BRAIN_EMBEDDER", "minilm")
if BRAIN_EMBEDDER not in ("minilm", "openai"):
    raise ImproperlyConfigured(f"BRAIN_EMBEDDER must be minilm or openai; got {BRAIN_EMBEDDER!r}")
BRAIN_EMBED_THREADS = env_int("BRAIN_EMBED_THREADS", 1, minimum=1, maximum=64)
# Threads per process that run a search's retrievers side by side (memory.index.side_by_side);
# each holds a database connection. 0 runs them in turn on the caller's thread.
BRAIN_SEARCH_THREADS = env_int("BRAIN_SEARCH_THREADS", 2, minimum=0, maximum=16)
# An organisation with this many passages (or facts) gets an HNSW index of its own; smaller ones
# are searched exactly (memory.index.org_indexes).
BRAIN_ORG_INDEX_ROWS = env_int("BRAIN_ORG_INDEX_ROWS", 1000, minimum=1)
BRAIN_EMBEDDINGS_URL = env_str("BRAIN_EMBEDDINGS_URL")
BRAIN_EMBEDDINGS_MODEL = env_str("BRAIN_EMBEDDINGS_MODEL", "text-embedding-3-small")
BRAIN_EMBEDDINGS_KEY = env_str("BRAIN_EMBEDDINGS_KEY")
if BRAIN_EMBEDDER == "openai" and not BRAIN_EMBEDDINGS_URL:
    raise ImproperlyConfigured("BRAIN_EMBEDDER=openai needs BRAIN_EMBEDDINGS_URL")
# Facts, entities and values are extracted from every ingested document unless switched off.
BRAIN_EXTRACT_FACTS = env_bool("BRAIN_EXTRACT_FACTS", True)
# Optional OpenAI-compatible chat endpoint that refines extraction; everything works without it.
BRAIN_LLM_URL = env_str("BRAIN_LLM_URL")
BRAIN_LLM_MODEL = env_str("BRAIN_LLM_MODEL", "gpt-4o-mini")
BRAIN_LLM_KEY = env_str("BRAIN_LLM_KEY")
# Bounds of a job's agent run (jobs.agent): model steps, seconds and tokens.
BRAIN_JOB_MAX_STEPS = env_int("BRAIN_JOB_MAX_STEPS", 8, minimum=1, maximum=50)
BRAIN_JOB_MAX_SECONDS = env_int("BRAIN_JOB_MAX_SECONDS", 120, minimum=5, maximum=3600)
BRAIN_JOB_MAX_TOKENS = env_int("BRAIN_JOB_MAX_TOKENS", 50_000, minimum=1000, maximum=2_000_000)
# A document claimed longer ago than this is taken to be lost with its worker and is re-queued.
BRAIN_INGEST_LEASE_SECONDS = env_int("BRAIN_INGEST_LEASE_SECONDS", 600, minimum=5)
# An ingestion task is stopped (soft limit: the document fails with the reason) and then killed
# (hard limit) before its lease runs out, so a claim past its lease always belongs to a dead task.
BRAIN_INGEST_TIME_LIMIT_SECONDS = env_int(
    "BRAIN_INGEST_TIME_LIMIT_SECONDS",
    BRAIN_INGEST_LEASE_SECONDS * 9 // 10,
    minimum=2,
    maximum=BRAIN_INGEST_LEASE_SECONDS - 1,
)
BRAIN_INGEST_SOFT_TIME_LIMIT_SECONDS = max(1, BRAIN_INGEST_TIME_LIMIT_SECONDS * 9 // 10)
# A document whose worker died this many times is marked failed instead of being tried again.
BRAIN_INGEST_MAX_ATTEMPTS = env_int("BRAIN_INGEST_MAX_ATTEMPTS", 5, minimum=1, maximum=100)
# Recovery sweeps (from beat, and at once whenever a worker connects to the broker): how often,
# and how long a queued document or request may wait before its message is taken to be lost.
BRAIN_SWEEP_INTERVAL_SECONDS = env_int("BRAIN_SWEEP_INTERVAL_SECONDS", 60, minimum=1, maximum=3600)
BRAIN_QUEUED_GRACE_SECONDS = env_int("BRAIN_QUEUED_GRACE_SECONDS", 300, minimum=0, maximum=86400)
# How often beat sends the outbox's messages that the broker could not take when their save
# committed (brain.infra.queueing): the longest a save made while the broker was away waits once it is back.
BRAIN_OUTBOX_SWEEP_SECONDS = env_int("BRAIN_OUTBOX_SWEEP_SECONDS", 10, minimum=1, maximum=3600)
# A request being sent for longer than this was interrupted (its worker died) and is queued again.
BRAIN_SEND_LEASE_SECONDS = env_int("BRAIN_SEND_LEASE_SECONDS", 300, minimum=5, maximum=86400)
BRAIN_REPORT_RETENTION_DAYS = env_int("BRAIN_REPORT_RETENTION_DAYS", 90, minimum=1, maximum=3650)
# Usage (brain.mcp.prices): with metering off nothing is charged or refused, for any plan; calls are still
# counted. New organisations start on BRAIN_DEFAULT_PLAN (a Plan slug: free or unlimited built in).
# Questions that found no evidence are kept this many days for the admins' overview.
BRAIN_METERING = env_bool("BRAIN_METERING", True)
BRAIN_DEFAULT_PLAN = env_str("BRAIN_DEFAULT_PLAN", "free")
BRAIN_MISS_RETENTION_DAYS = env_int("BRAIN_MISS_RETENTION_DAYS", 30, minimum=1, maximum=3650)
# One size limit for request bodies, REST and /mcp alike (413 past it). The default holds the
# longest document (memory.limits, the same on every way in: 2,000,000 characters, 8 MB
# of UTF-8, 12 MB as JSON \u escapes); the minimum holds 200,000 characters with every one escaped.
BRAIN_MAX_REQUEST_BYTES = env_int("BRAIN_MAX_REQUEST_BYTES", 16 * 1024 * 1024, minimum=4 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = BRAIN_MAX_REQUEST_BYTES
# The Add knowledge page (memory.upload): how many files one submission may carry and how large
# each may be. A file past the size is dropped while it arrives, so it is never held whole.
BRAIN_UPLOAD_MAX_FILES = env_int("BRAIN_UPLOAD_MAX_FILES", 20, minimum=1, maximum=100)
BRAIN_UPLOAD_MAX_FILE_MB = env_int("BRAIN_UPLOAD_MAX_FILE_MB", 10, minimum=1, maximum=1024)
# Processor time a worker may spend reading one uploaded file into documents (memory.upload.reading);
# a file that needs more is refused with that reason. The kernel enforces it on the reading process.
BRAIN_UPLOAD_READ_SECONDS = env_int("BRAIN_UPLOAD_READ_SECONDS", 60, minimum=1, maximum=3600)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "brain",
    "memory",
    "skills",
    "contacts",
    "registers",
    "jobs",
    "usage",
    "connectors",
    "overview",
]

MIDDLEWARE = [
    "brain.infra.probes.ProbeMiddleware",  # first: orchestrators' probes skip host checks and the HTTPS redirect
    "overview.metrics.MetricsMiddleware",  # /metrics, for Prometheus: the same reasons, and its own access rule
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "brain.faces.web.ReaderTimeZoneMiddleware",  # times on pages in the zone the reader chose (their account page)
    # With a replica: a page that wrote sends its user's reads to the primary.
    "brain.infra.replicas.WebWritesMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "brain.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "overview.context_processors.overview_link",
                "overview.context_processors.needs_you",
            ],
        },
    },
]
ASGI_APPLICATION = "brain.asgi.application"


def _database_url() -> str:
    url = env_str("DATABASE_URL") or _SERVICES.get("DATABASE_URL", "")
    if not url:
        raise ImproperlyConfigured("DATABASE_URL is not set; start the embedded services with ./brainctl run")
    return url


# Django's PostgreSQL backend, its health check asking the socket before the server (brain.infra.postgres).
POSTGRES_ENGINE = "brain.infra.postgres"
DATABASES = {
    "default": dj_database_url.parse(
        _database_url(),
        conn_max_age=env_int("BRAIN_DB_CONN_MAX_AGE", 60, minimum=0),
        conn_health_checks=True,
        engine=POSTGRES_ENGINE,
    )
}
DATABASES["default"]["TEST"] = {"NAME": env_str("BRAIN_TEST_DB_NAME", "test_brain")}
# An optional streaming replica of the same database (docs/replicas.md): read-only tools read from
# it, except for a user who changed something within BRAIN_READ_YOUR_WRITES_SECONDS.
if _replica_url := env_str("DATABASE_REPLICA_URL"):
    DATABASES["replica"] = dj_database_url.parse(
        _replica_url,
        conn_max_age=env_int("BRAIN_DB_CONN_MAX_AGE", 60, minimum=0),
        conn_health_checks=True,
        engine=POSTGRES_ENGINE,
    )
    DATABASES["replica"]["TEST"] = {"MIRROR": "default"}  # the test runner creates no database for it
    DATABASE_ROUTERS = ["brain.infra.replicas.ReplicaRouter"]
BRAIN_READ_YOUR_WRITES_SECONDS = env_int("BRAIN_READ_YOUR_WRITES_SECONDS", 10, minimum=0, maximum=3600)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Per-process cache (term statistics for ranking, health results): small, hot and cheap to rebuild.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "OPTIONS": {"MAX_ENTRIES": 50_000},
    }
}
REDIS_URL = env_str("REDIS_URL") or _SERVICES.get("REDIS_URL", "redis://127.0.0.1:6379/0")

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# How long an invitation link works (brain.core.invitations builds it with Django's password-reset
# token generator, which reads this): three days unless set, between ten minutes and thirty days.
PASSWORD_RESET_TIMEOUT = env_int("PASSWORD_RESET_TIMEOUT", 3 * 86_400, minimum=600, maximum=30 * 86_400)
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"  # admins to the overview, members to search (brain.views.home)
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("es", "Español")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not (DEBUG or TESTING)
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = DEBUG or TESTING

# Outgoing mail. Without EMAIL_HOST no mail server is set up (brain.infra.mail): Brain sends no mail and
# shows each link a mail would carry (an answer link, an invitation) on the page to pass on.
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "")
EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1, maximum=65535)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "brain@localhost")

# Reaching people (contacts): Slack bot token and API, and a Twilio-compatible API for calls and WhatsApp.
BRAIN_SLACK_BOT_TOKEN = env_str("BRAIN_SLACK_BOT_TOKEN")
BRAIN_SLACK_API_URL = env_str("BRAIN_SLACK_API_URL", "https://slack.com/api")
BRAIN_TWILIO_API_URL = env_str("BRAIN_TWILIO_API_URL", "https://api.twilio.com")
BRAIN_TWILIO_ACCOUNT_SID = env_str("BRAIN_TWILIO_ACCOUNT_SID")
BRAIN_TWILIO_AUTH_TOKEN = env_str("BRAIN_TWILIO_AUTH_TOKEN")
BRAIN_TWILIO_FROM = env_str("BRAIN_TWILIO_FROM")
BRAIN_ANSWER_LINK_DAYS = env_int("BRAIN_ANSWER_LINK_DAYS", 14, minimum=1, maximum=365)

# --- Outbound connections to destinations members choose (brain.infra.outbound, docs/operations.md) -----
# An IMAP host, an OAuth client's metadata document, a contact's Slack webhook: Brain reaches them
# only at global addresses, unless the operator lists the host name or a network holding the
# address. The test suite's stand-in servers listen on loopback, so the suite allows it.
BRAIN_OUTBOUND_ALLOW = env_hosts_and_networks(
    "BRAIN_OUTBOUND_ALLOW", ["127.0.0.0/8", "::1", "localhost"] if TESTING else []
)
# Seconds to connect to such a destination and hear its first answer (a greeting, a TLS handshake).
BRAIN_OUTBOUND_TIMEOUT_SECONDS = env_int("BRAIN_OUTBOUND_TIMEOUT_SECONDS", 5, minimum=1, maximum=60)
if os.environ.get("BRAIN_OAUTH_METADATA_PRIVATE_HOSTS", "").strip():
    raise ImproperlyConfigured(
        "BRAIN_OAUTH_METADATA_PRIVATE_HOSTS is no longer read: list those hosts in BRAIN_OUTBOUND_ALLOW, "
        "which every connection to a destination a member chose obeys"
    )

# --- Connectors (docs/connectors.md) ----------------------------------------------------------
# Fernet keys for credentials at rest, newest first (rotate: put a new one first, run
# manage.py rotate_connector_keys, drop the old one); without them a key is derived from SECRET_KEY.
BRAIN_CONNECTOR_KEYS = env_list("BRAIN_CONNECTOR_KEYS", [])
# How long the hash of each accepted webhook body is kept: the same signed body again within it is
# a replay, answered and not acted on (connectors.hooks).
BRAIN_WEBHOOK_REPLAY_DAYS = env_int("BRAIN_WEBHOOK_REPLAY_DAYS", 30, minimum=1, maximum=365)
BRAIN_GITHUB_API_URL = env_str("BRAIN_GITHUB_API_URL", "https://api.github.com").rstrip("/")
# Sentry's web API; a self-hosted Sentry's is https://<host>/api/0/.
BRAIN_SENTRY_API_URL = env_str("BRAIN_SENTRY_API_URL", "https://sentry.io/api/0/").rstrip("/") + "/"

# --- OAuth 2.1 for /mcp (brain.oauth, docs/connect.md) ------------------------------------------
# Brain is the authorisation server for its own MCP endpoint, on django-oauth-toolkit. Assistants
# that connect by URL register themselves (RFC 7591) or name a client metadata document (an HTTPS
# URL as client id); either can be switched off, and both limited to redirect hosts an operator lists.
INSTALLED_APPS += ["oauth2_provider"]
# The toolkit's own models, named so that migrations can refer to them as its swappable settings.
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth2_provider.Application"
OAUTH2_PROVIDER_ACCESS_TOKEN_MODEL = "oauth2_provider.AccessToken"  # noqa: S105 (a model name)
OAUTH2_PROVIDER_REFRESH_TOKEN_MODEL = "oauth2_provider.RefreshToken"  # noqa: S105 (a model name)
OAUTH2_PROVIDER_GRANT_MODEL = "oauth2_provider.Grant"
OAUTH2_PROVIDER_ID_TOKEN_MODEL = "oauth2_provider.IDToken"  # noqa: S105 (a model name)
BRAIN_OAUTH_REGISTRATION = env_bool("BRAIN_OAUTH_REGISTRATION", True)
BRAIN_OAUTH_CLIENT_METADATA = env_bool("BRAIN_OAUTH_CLIENT_METADATA", True)
# Self-registrations one address may make in an hour (counted per web process).
BRAIN_OAUTH_REGISTRATIONS_PER_HOUR = env_int("BRAIN_OAUTH_REGISTRATIONS_PER_HOUR", 20, minimum=1, maximum=100000)
# Hosts a self-registered client may send people back to (ALLOWED_HOSTS syntax); empty: any.
BRAIN_OAUTH_REDIRECT_HOSTS = env_list("BRAIN_OAUTH_REDIRECT_HOSTS", [])
# Schemes a redirect may use besides https and loopback http (apps that open a link of their own).
BRAIN_OAUTH_REDIRECT_SCHEMES = env_list("BRAIN_OAUTH_REDIRECT_SCHEMES", ["cursor", "vscode", "vscode-insiders"])
# Client metadata documents are fetched where BRAIN_OUTBOUND_ALLOW lets Brain connect; an extra
# CA file is trusted for those fetches when set (a private CA of a host the operator allowed).
BRAIN_OAUTH_METADATA_CA_FILE = env_str("BRAIN_OAUTH_METADATA_CA_FILE")
BRAIN_OAUTH_ACCESS_TOKEN_SECONDS = env_int("BRAIN_OAUTH_ACCESS_TOKEN_SECONDS", 3600, minimum=60, maximum=86400)
BRAIN_OAUTH_REFRESH_TOKEN_DAYS = env_int("BRAIN_OAUTH_REFRESH_TOKEN_DAYS", 30, minimum=1, maximum=365)
OAUTH2_PROVIDER = {
    "OAUTH2_VALIDATOR_CLASS": "brain.oauth.validator.BrainValidator",
    "SCOPES": {
        "read": "Search and read the organisation's memory",
        "write": "Save shared knowledge",
        "personal": "Save only to your personal memory",
    },
    "DEFAULT_SCOPES": ["read", "write"],
    "ACCESS_TOKEN_EXPIRE_SECONDS": BRAIN_OAUTH_ACCESS_TOKEN_SECONDS,
    "REFRESH_TOKEN_EXPIRE_SECONDS": BRAIN_OAUTH_REFRESH_TOKEN_DAYS * 86400,
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "PKCE_REQUIRED": True,
    "ALLOW_LOCALHOST_LOOPBACK": True,
    "ALLOWED_REDIRECT_URI_SCHEMES": ["https", "http", *BRAIN_OAUTH_REDIRECT_SCHEMES],
    "REQUEST_APPROVAL_PROMPT": "force",
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
    "COMPLIANT_BCP_RFC9700_PKCE_REQUIRED": True,
    "DCR_ENABLED": BRAIN_OAUTH_REGISTRATION,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    "CIMD_ENABLED": BRAIN_OAUTH_CLIENT_METADATA,
    "CIMD_METADATA_FETCHER": "brain.oauth.fetcher.MetadataFetcher",
    "CIMD_FETCH_TIMEOUT_SECONDS": env_int("BRAIN_OAUTH_METADATA_TIMEOUT_SECONDS", 5, minimum=1, maximum=30),
    "CIMD_MAX_DOCUMENT_SIZE": 5 * 1024,
}

# The toolkit's deploy checks that Brain answers otherwise: the issuer goes into every
# authorisation response from brain.oauth.views (W005), and plain-http redirects are allowed
# only to loopback addresses, by brain.oauth.clients (W008), as native apps need (RFC 8252).
SILENCED_SYSTEM_CHECKS = ["oauth2_provider.W005", "oauth2_provider.W008"]

# Production behind TLS: BRAIN_HTTPS=1 turns on everything `manage.py check --deploy` asks for.
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_SSL_REDIRECT = HTTPS and env_bool("BRAIN_SSL_REDIRECT", True)
SECURE_HSTS_SECONDS = env_int("BRAIN_HSTS_SECONDS", 31536000 if HTTPS else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS
SECURE_HSTS_PRELOAD = HTTPS
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("BRAIN_BEHIND_PROXY") else None
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["brain.api.authentication.BearerTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "brain.api.exceptions.exception_handler",
    "DEFAULT_PARSER_CLASSES": [
        "brain.api.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Brain API",
    # How to authenticate comes first; every operation is tagged with one of the groups, in this order.
    "DESCRIPTION": API_DESCRIPTION,
    "TAGS": OPENAPI_TAGS,
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Every file of both pages comes from this server (the sidecar package), and nothing else is fetched:
    # no online validator badge (Swagger UI asks validator.swagger.io for it unless the schema is on
    # localhost), no web fonts for ReDoc (templates/api/ holds both pages, with Brain's icon).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    "REDOC_DIST": "SIDECAR",
    "REDOC_UI_SETTINGS": {
        "theme": {
            "typography": {
                "fontFamily": 'system-ui, -apple-system, "Segoe UI", sans-serif',
                "headings": {"fontFamily": 'system-ui, -apple-system, "Segoe UI", sans-serif'},
                "code": {"fontFamily": "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace"},
            }
        }
    },
}

CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# The worker and beat wait for the broker however long it is away (the default gives up after
# 100 tries, about 45 minutes). A save never waits on it: its message goes through the outbox
# (brain.infra.queueing), sent after the commit on a connection of its own with short timeouts.
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_connect_timeout": 2}
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2}
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_ROUTES = {
    # Sweeps stay off the ingest and dispatch queues, so a long backlog does not delay them.
    "brain.tasks.send_outbox_task": {"queue": "celery"},
    "memory.tasks.sweep_stuck_documents_task": {"queue": "celery"},
    "memory.tasks.recover_worker_task": {"queue": "celery"},
    "memory.tasks.sweep_pending_extractions_task": {"queue": "celery"},
    "contacts.tasks.sweep_queued_requests_task": {"queue": "celery"},
    "jobs.tasks.sweep_jobs_task": {"queue": "celery"},
    # Building an organisation's index can take minutes: off the ingest queue and the sweeps'.
    "memory.tasks.sync_org_indexes_task": {"queue": "nightly"},
    "memory.tasks.*": {"queue": "ingest"},
    "contacts.tasks.*": {"queue": "dispatch"},
    "brain.tasks.*": {"queue": "nightly"},
    "registers.tasks.*": {"queue": "nightly"},
    "usage.tasks.*": {"queue": "nightly"},
    "jobs.tasks.*": {"queue": "jobs"},
    "connectors.tasks.sync_due_connections_task": {"queue": "celery"},
    # A sync reads another system for minutes at times: beside the nightly scans, off the sweeps.
    "connectors.tasks.*": {"queue": "nightly"},
}
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_BEAT_SCHEDULE = {
    "send-outbox": {
        "task": "brain.tasks.send_outbox_task",
        "schedule": float(BRAIN_OUTBOX_SWEEP_SECONDS),
    },
    "sweep-stuck-documents": {
        "task": "memory.tasks.sweep_stuck_documents_task",
        "schedule": float(BRAIN_SWEEP_INTERVAL_SECONDS),
    },
    "sweep-pending-extractions": {
        "task": "memory.tasks.sweep_pending_extractions_task",
        "schedule": float(BRAIN_SWEEP_INTERVAL_SECONDS),
    },
    "sweep-queued-requests": {
        "task": "contacts.tasks.sweep_queued_requests_task",
        "schedule": float(BRAIN_SWEEP_INTERVAL_SECONDS),
    },
    "sweep-jobs": {
        "task": "jobs.tasks.sweep_jobs_task",
        "schedule": float(BRAIN_SWEEP_INTERVAL_SECONDS),
    },
    "sync-org-indexes": {
        "task": "memory.tasks.sync_org_indexes_task",
        "schedule": 600.0,
    },
    "purge-expired-reports": {
        "task": "brain.tasks.purge_expired_reports_task",
        "schedule": crontab(hour=3, minute=15),
    },
    "sync-connections": {
        "task": "connectors.tasks.sync_due_connections_task",
        "schedule": 60.0,
    },
    "purge-unused-oauth": {
        "task": "brain.tasks.purge_unused_oauth_task",
        "schedule": crontab(hour=3, minute=35),
    },
    "purge-old-misses": {
        "task": "usage.tasks.purge_old_misses_task",
        "schedule": crontab(hour=3, minute=25),
    },
    "purge-due-trash": {
        "task": "memory.tasks.purge_due_trash_task",
        "schedule": crontab(hour=3, minute=45),
    },
    "purge-expired-audit": {
        "task": "brain.tasks.purge_expired_audit_task",
        "schedule": crontab(hour=3, minute=55),
    },
}
# Nightly backups (brain.core.backups, docs/operations.md "Backups and restore"): off unless
# BRAIN_BACKUP_DIR names a folder; each night one archive is written there and the newest
# BRAIN_BACKUP_KEEP are kept.
BRAIN_BACKUP_DIR = env_str("BRAIN_BACKUP_DIR")
BRAIN_BACKUP_KEEP = env_int("BRAIN_BACKUP_KEEP", 7, minimum=1, maximum=3650)
# A folder holding pg_dump and pg_restore of the server's major version or newer, looked at first
# (then the embedded server's own, Debian's /usr/lib/postgresql/<version>/bin, and PATH).
BRAIN_PG_BIN = env_str("BRAIN_PG_BIN")
if BRAIN_BACKUP_DIR:
    CELERY_BEAT_SCHEDULE["back-up"] = {"task": "brain.tasks.back_up_task", "schedule": crontab(hour=2, minute=45)}
CELERY_TIMEZONE = "UTC"

# BRAIN_LOG_FORMAT=json: every process (web, worker, beat) logs one JSON object per line, with the
# request id that follows a call into the tasks it queues (brain.infra.logs, docs/operations.md).
BRAIN_LOG_FORMAT = env_str("BRAIN_LOG_FORMAT", "plain").lower()
if BRAIN_LOG_FORMAT not in ("plain", "json"):
    raise ImproperlyConfigured(f"BRAIN_LOG_FORMAT must be plain or json; got {BRAIN_LOG_FORMAT!r}")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request": {"()": "brain.infra.logs.RequestContext"}},
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
        "json": {"()": "brain.infra.logs.JsonFormatter"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": BRAIN_LOG_FORMAT, "filters": ["request"]}},
    "root": {"handlers": ["console"], "level": env_str("BRAIN_LOG_LEVEL", "INFO")},
    "loggers": {"mcp": {"level": "WARNING"}, "httpx": {"level": "WARNING"}},
}
if BRAIN_LOG_FORMAT == "json":  # uvicorn's own lines (its errors, the access log) through the same handler
    for _name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        cast(dict[str, Any], LOGGING["loggers"])[_name] = {"handlers": ["console"], "propagate": False}

# --- Metrics (brain.infra.metrics, overview.metrics, docs/operations.md "Metrics and logs") ------
# /metrics answers loopback clients that came through no proxy, and anyone bearing this token.
BRAIN_METRICS_TOKEN = env_str("BRAIN_METRICS_TOKEN")
if BRAIN_METRICS_TOKEN and len(BRAIN_METRICS_TOKEN) < 24:
    raise ImproperlyConfigured("BRAIN_METRICS_TOKEN must be at least 24 characters long (or unset: loopback only)")
# Read by prometheus_client itself when it is first imported; checked here so that a wrong folder
# stops Brain with these words instead of a traceback from the first counter.
PROMETHEUS_MULTIPROC_DIR = env_str("PROMETHEUS_MULTIPROC_DIR")
if PROMETHEUS_MULTIPROC_DIR and not os.path.isdir(PROMETHEUS_MULTIPROC_DIR):
    raise ImproperlyConfigured(
        f"PROMETHEUS_MULTIPROC_DIR names {PROMETHEUS_MULTIPROC_DIR!r}, which is not a folder; create it "
        "(empty) before Brain's processes start, or unset it"
    )

# --- Failed-login throttling (django-axes) -----------------------------------------------------
# Both login pages (the site's and the admin's) count failures per address: after
# BRAIN_LOGIN_FAILURE_LIMIT failures from one address, whatever usernames they named, attempts
# from it are refused for BRAIN_LOGIN_COOLOFF_MINUTES after the last failure. Counting per
# username would let anyone lock any account by typing its name; its owner, elsewhere, still
# logs in. A success resets nothing: a login to one's own account must not clear the address's
# guesses at another's. Attempts live in the database, so every web process sees the same counts.
INSTALLED_APPS += ["axes"]
MIDDLEWARE += ["axes.middleware.AxesMiddleware"]  # last, as axes asks
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
# Keeps people signed in through their organisation's provider (brain.sso); it checks no passwords
AUTHENTICATION_BACKENDS += ["brain.sso.provider.SsoSessionBackend"]
AXES_FAILURE_LIMIT = env_int("BRAIN_LOGIN_FAILURE_LIMIT", 5, minimum=1, maximum=1000)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("BRAIN_LOGIN_COOLOFF_MINUTES", 15, minimum=1, maximum=10080))
AXES_LOCKOUT_PARAMETERS = ["ip_address"]
AXES_RESET_ON_SUCCESS = False
AXES_LOCKOUT_CALLABLE = "brain.faces.login_throttle.locked_out"
AXES_CLIENT_IP_CALLABLE = "brain.faces.login_throttle.client_ip"
BRAIN_BEHIND_PROXY = env_bool("BRAIN_BEHIND_PROXY")
cast(dict[str, Any], LOGGING["loggers"])["axes"] = {"level": "WARNING"}  # failures and lockouts, no banner

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# onnxruntime (the minilm embedder) otherwise keeps a device id and an event store under
# ~/.cache/Microsoft and tries to send usage events to Microsoft from every process that loads a
# model. It reads this when it is first imported, which is after the settings, in a function.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
