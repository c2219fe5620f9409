"""The text at the top of the API docs (SPECTACULAR_SETTINGS["DESCRIPTION"]): how to authenticate first,
then the one error body, then the groups the endpoints are in."""

from __future__ import annotations

from brain.api.groups import GROUPS

CONNECT_PATH = "/connect/"  # the Connect an assistant page (brain/urls.py "connect"); a test keeps them equal

AUTHENTICATION = f"""## Authentication

Every request carries an API token in the `Authorization` header:

```
Authorization: Bearer brn_...
```

Make one on Brain's **Connect an assistant** page, [{CONNECT_PATH}]({CONNECT_PATH}), once logged in. It is shown
once: copy it then, as Brain keeps only a hash. A token acts as the person who made it, in one organisation,
and sees what they may see. It may expire, and that person can revoke it on the same page. Its access,
chosen when it is made, is a set of scopes:

| Access | Scopes | What the token may do |
|---|---|---|
| Read only | `read` | search and read; also report an issue or send feedback, which change no knowledge |
| Read and write | `read`, `write` | also save and change shared knowledge, registers and jobs |
| Personal memories only | `read`, `write`, `personal` | read; write only to the person's own personal memory |

Here, **Authorize** takes the token alone (without `Bearer `) and sends it with every request you try."""

ERRORS = """## Errors

Every error has the same JSON body:

```json
{"code": "permission_denied", "message": "...", "details": {"scope": "write"}, "retryable": false}
```

`message` is written to be read; `details` names what the refusal is about, `{}` when there is nothing more.
**401**: the token is missing, unknown, revoked or expired. **402** (`out_of_credits`): the organisation
cannot pay for the call (this month's free reads are used and its credits do not cover it); the message says
what to do. **403** (`permission_denied`): the token lacks a scope (`details.scope`) or the organisation has
the feature off (`details.feature`). **503** (`unavailable`, `"retryable": true`): a model or Brain's database
did not answer; the `Retry-After` header says how many seconds to wait before trying again. A 500 or 503
answering a write says the write may have been saved (`details.may_have_saved`)."""

ENDPOINTS = "\n".join(
    [
        "## Endpoints",
        "",
        "Each tool endpoint runs the same code as the MCP tool its operation id names: the same arguments, "
        "limits, messages and call records. The endpoints are grouped by what they are for:",
        "",
        *(f"- **{name}**: {description}" for name, description in GROUPS),
    ]
)

DESCRIPTION = "\n\n".join([AUTHENTICATION, ERRORS, ENDPOINTS])
