"""Client metadata documents (a client id that is an HTTPS URL whose JSON describes the client),
fetched under this server's rules.

The toolkit's fetcher already refuses anything but HTTPS, redirects, slow answers and documents past
the size limit. The URL is one a stranger chooses, so this one reaches its host only as the
outbound address rule allows (``brain.infra.outbound``: global addresses, or what the operator lists in
BRAIN_OUTBOUND_ALLOW, resolved once and connected to by the checked address), trusts
BRAIN_OAUTH_METADATA_CA_FILE besides the system's CAs, and then applies the same redirect rules as
dynamic registration (``brain.oauth.clients``). Why a document was refused goes to the log; the
authorise page answers as for an unknown client whatever the reason."""

from __future__ import annotations

import json
import ssl
import time
from typing import Any

import urllib3
from django.conf import settings
from oauth2_provider import cimd
from oauth2_provider.settings import oauth2_settings

from brain.infra import outbound
from brain.oauth.clients import metadata_problem


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
        try:
            destination = outbound.check(url.hostname or "", url.port or 443)
        except outbound.Refused as exc:
            raise cimd.CIMDError(f"the client metadata document's host may not be reached: {exc}") from exc
        metadata, max_age = self._answer(url, destination)
        if problem := metadata_problem(metadata):
            raise cimd.CIMDError(f"the client metadata document is refused: {problem[1]}")
        return metadata, max_age

    def _answer(self, url: Any, destination: outbound.Destination) -> tuple[dict[str, Any], int]:
        """The document, all within one deadline."""
        seconds = oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS
        deadline = time.monotonic() + seconds
        pool = urllib3.HTTPSConnectionPool(
            host=destination.host,
            port=destination.port,
            timeout=urllib3.Timeout(connect=min(seconds, outbound.timeout_seconds()), read=seconds, total=seconds),
            retries=False,
            maxsize=1,
            ssl_context=_tls(),
        )
        pool.ConnectionCls = outbound.pinned_connection(destination, https=True)  # type: ignore[assignment]
        target = url.path + (f"?{url.query}" if url.query else "")
        try:
            answer = pool.urlopen(
                "GET",
                target,
                headers={"Host": url.netloc, "Accept": "application/json"},
                redirect=False,
                preload_content=False,
            )
            try:
                return _document(answer, deadline)
            finally:
                answer.release_conn()
        except urllib3.exceptions.HTTPError as exc:
            raise cimd.CIMDError(f"could not fetch the client metadata document: {exc}") from exc
        finally:
            pool.close()
