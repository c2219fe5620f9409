"""A certified OpenID Connect provider (npm's ``oidc-provider``) on a loopback port, for the
single sign-on tests: ``launcher.js`` beside this file runs it, with the clients and accounts
a test gives, and routes under ``/_test/`` to change the accounts and to tamper with the next ID
token. Its packages are pinned in ``package-lock.json`` and installed with ``npm ci`` the first
time a test needs them."""

from __future__ import annotations

import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest
import requests

HERE = Path(__file__).resolve().parent
STARTUP_SECONDS = 120  # npm ci on a cold machine, then node's start, on a busy two-core machine
CALLBACK = "http://testserver/sso/callback/"
CLIENT_SECRET = "a-client-secret-for-brain-tests"  # noqa: S105 -- the test provider's, on loopback only


def install() -> None:
    """``npm ci`` once, whichever test process gets here first (the others wait on the lock)."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("The single sign-on tests need Node and npm: apt-get install nodejs npm (./brainctl test does).")
    with (Path(tempfile.gettempdir()) / "brain-oidc-provider-npm.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        installed = HERE / "node_modules" / ".package-lock.json"
        if installed.exists() and installed.stat().st_mtime >= (HERE / "package-lock.json").stat().st_mtime:
            return
        done = subprocess.run(  # noqa: S603
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=STARTUP_SECONDS,
            check=False,
        )
        if done.returncode != 0:
            pytest.fail(f"npm ci for the test provider failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")


@dataclass
class Provider:
    issuer: str
    client_id: str
    client_secret: str

    def set_accounts(self, accounts: dict[str, dict[str, Any]]) -> None:
        requests.put(f"{self.issuer}/_test/accounts", json=accounts, timeout=10).raise_for_status()

    def tamper(self, **how: Any) -> None:
        requests.put(f"{self.issuer}/_test/tamper", json=how, timeout=10).raise_for_status()

    def sign_in(self, authorize_url: str, account: str) -> str:
        """Sign ``account`` in at the provider from Brain's redirect, as a person's browser would,
        and return where the provider sends it back (Brain's callback with the code and state). Each
        sign-in is a browser of its own, so the provider asks who signs in every time."""
        browser, url = requests.Session(), authorize_url
        for _ in range(10):
            answer = browser.get(url, allow_redirects=False, timeout=10)
            if answer.status_code == 200 and url.startswith(f"{self.issuer}/interaction/"):
                answer = browser.post(f"{url}/login", data={"login": account}, allow_redirects=False, timeout=10)
            if answer.status_code not in (302, 303):
                raise AssertionError(f"the provider answered {answer.status_code}: {answer.text[:500]}")
            url = urljoin(url, answer.headers["Location"])
            if url.startswith(CALLBACK):
                return url.removeprefix("http://testserver")
        raise AssertionError("the provider never sent the browser back to Brain")


def _read_issuer(process: subprocess.Popen[str], errors: Path) -> str:
    assert process.stdout is not None
    deadline = time.monotonic() + STARTUP_SECONDS
    said = ""
    while time.monotonic() < deadline and process.poll() is None:
        ready, _, _ = select.select([process.stdout], [], [], 1)
        if ready:
            line = process.stdout.readline()
            said += line
            if line.startswith("issuer "):
                return line.split()[1]
    raise AssertionError(f"the test provider did not start; it said:\n{said}{errors.read_text()[-3000:]}")


@contextmanager
def oidc_provider(*, client_id: str = "brain", client_secret: str = CLIENT_SECRET) -> Iterator[Provider]:
    install()
    with tempfile.TemporaryDirectory(prefix="brain-oidc-") as tmp:
        config = Path(tmp) / "config.json"
        clients = [{"client_id": client_id, "client_secret": client_secret, "redirect_uris": [CALLBACK]}]
        config.write_text(json.dumps({"clients": clients, "accounts": {}}))
        node = shutil.which("node") or "/usr/bin/node"
        errors = Path(tmp) / "stderr.log"
        with errors.open("w") as stderr:
            process = subprocess.Popen(  # noqa: S603
                [node, str(HERE / "launcher.js"), str(config)],
                cwd=HERE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                env={**os.environ, "NODE_ENV": "test"},
            )
        try:
            issuer = _read_issuer(process, errors)
            yield Provider(issuer=issuer, client_id=client_id, client_secret=client_secret)
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
