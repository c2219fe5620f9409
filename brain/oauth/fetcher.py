"""Client metadata documents (a client id that is an HTTPS URL whose JSON describes the client),
fetched under this server's rules.

The toolkit's fetcher already refuses anything but HTTPS, redirects, slow answers, documents past
the size limit and hosts that resolve to private addresses, and connects to the address it checked.
This one adds the operator's exceptions (BRAIN_OAUTH_METADATA_PRIVATE_HOSTS may be fetched at
private addresses, and BRAIN_OAUTH_METADATA_CA_FILE is trusted for them) and then applies the same
redirect rules as dynamic registration (``brain.oauth.clients``)."""

from __future__ import annotations

import json
import socket
import ssl
import time
from typing import Any

import urllib3
from django.conf import settings
from django.http.request import validate_host
from oauth2_provider import cimd
from oauth2_provider.settings import oauth2_settings

from brain.oauth.clients import metadata_problem


def _addresses(host: str, port: int) -> list[str]:
    """Every address of a host the operator lets Brain fetch from at private addresses."""
    try:
        found = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        raise cimd.CIMDError(f"could not resolve {host}: {exc}") from exc
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def _tls() -> ssl.SSLContext:
    context = ssl.create_default_context()
    if settings.BRAIN_OAUTH_METADATA_CA_FILE:
        context.load_verify_locations(cafile=settings.BRAIN_OAUTH_METADATA_CA_FILE)
    return context


def _document(answer: Any, deadline: float) -> tuple[dict[str, Any], int]:
    """The JSON object an answer carries and how long it may be kept. The body is read a piece
    at a time against the deadline: a server that sends a byte now and then, each within the
    read timeout, would otherwise hold the request for as long as it likes."""
    if answer.status != 200:
        raise cimd.CIMDError(f"the client metadata document answered HTTP {answer.status}")
    kind = answer.headers.get("Content-Type", "").split(";")[0].strip().lower()
    if kind != "application/json" and not (kind.startswith("application/") and kind.endswith("+json")):
        raise cimd.CIMDError(f"the client metadata document is not JSON (Content-Type: {kind!r})")
    limit = oauth2_settings.CIMD_MAX_DOCUMENT_SIZE
    body = b""
    while piece := answer.read1(4096):
        body += piece
        if len(body) > limit:
            raise cimd.CIMDError(f"the client metadata document exceeds the maximum allowed size of {limit} bytes")
        if time.monotonic() > deadline:
            raise cimd.CIMDError("the client metadata document came too slowly")
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise cimd.CIMDError("the client metadata document is not valid JSON") from exc
    if not isinstance(data, dict):
        raise cimd.CIMDError("the client metadata document must be a JSON object")
    return data, cimd._effective_max_age(answer.headers.get("Cache-Control"))


class MetadataFetcher(cimd.SafeMetadataFetcher):
    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        url = cimd._validate_client_id_url(client_id)
        host, port = url.hostname or "", url.port or 443
        if validate_host(host, settings.BRAIN_OAUTH_METADATA_PRIVATE_HOSTS):
            addresses = _addresses(host, port)
        else:
            addresses = cimd._resolve_and_validate(host, port)
        metadata, max_age = self._first_answer(url, addresses)
        if problem := metadata_problem(metadata):
            raise cimd.CIMDError(f"the client metadata document is refused: {problem[1]}")
        return metadata, max_age

    def _first_answer(self, url: Any, addresses: list[str]) -> tuple[dict[str, Any], int]:
        """The document from the first address that answers, all within one deadline; the
        connection goes to the checked address while TLS checks the certificate for the host."""
        deadline = time.monotonic() + oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS
        target = url.path + (f"?{url.query}" if url.query else "")
        headers = {"Host": url.netloc, "Accept": "application/json"}
        failure: Exception | None = None
        for address in addresses:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            pool = urllib3.HTTPSConnectionPool(
                host=address,
                port=url.port or 443,
                timeout=urllib3.Timeout(connect=left, read=left, total=left),
                retries=False,
                maxsize=1,
                ssl_context=_tls(),
                server_hostname=url.hostname,
                assert_hostname=url.hostname,
            )
            try:
                answer = pool.urlopen("GET", target, headers=headers, redirect=False, preload_content=False)
                try:
                    return _document(answer, deadline)
                finally:
                    answer.release_conn()
            except urllib3.exceptions.HTTPError as exc:
                failure = exc
            finally:
                pool.close()
        raise cimd.CIMDError(f"could not fetch the client metadata document: {failure or 'out of time'}")
