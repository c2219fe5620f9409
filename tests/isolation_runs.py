"""Running matrix cases in one organisation, and reading the answers.

An answer is compared with the twin's after its ids, times and timings are normalised, and
scanned for secret words the caller did not send. Every call runs in a savepoint that is rolled
back, so a write never changes what the next case sees.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.db import transaction
from rest_framework.test import APIClient

from brain.core.errors import DomainError
from brain.mcp.invoke import execute
from brain.mcp.registry import PROMPTS, TOOLS
from tests.isolation_cases import Case, Pool, Ref, Target
from tests.isolation_world import KINDS, MISSING, SECRET_WORDS, Sight, World

VOLATILE = {"timings_ms", "elapsed_ms", "ms"}
TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?")
PUBLIC_ID = re.compile(r"\b(?:(doc|chunk|mem|ent|con|cmt|ctr|term|job)_\d+|(act|prf|req)_[0-9a-f]{8,})\b")
NOWHERE = MISSING + 999_000  # the missing id every refusal is compared with


@dataclass(frozen=True)
class Answer:
    status: int
    code: str
    body: Any
    text: str


def missing_id(kind: str, index: int) -> str:
    return f"{kind}_{NOWHERE + index}"


class Side:
    """One organisation as the matrix calls it: whose refs, which member, which REST clients."""

    def __init__(self, world: World, own: Sight, attacked: Sight, *, twin: bool) -> None:
        self.world, self.own, self.attacked, self.twin = world, own, attacked, twin
        self._clients: dict[str, APIClient] = {}

    def value(self, ref: Ref) -> Any:
        if ref.kind not in KINDS:
            return self.attacked.hidden_literals[ref.kind][ref.key]
        if ref.which == "missing":
            return missing_id(ref.kind, ref.key)
        if ref.which == "visible":
            return f"{ref.kind}_{self.own.visible[ref.kind][ref.key]}"
        if self.twin:  # what is hidden in A does not exist in the twin
            return f"{ref.kind}_{MISSING + 1000 * KINDS.index(ref.kind) + ref.key}"
        return f"{ref.kind}_{self.attacked.hidden[ref.kind][ref.key]}"

    def concrete(self, value: Any) -> Any:
        if isinstance(value, Ref):
            return self.value(value)
        if isinstance(value, dict):
            return {k: self.concrete(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.concrete(v) for v in value]
        return value

    def describe(self, value: Any) -> list[str]:
        """What the hidden refs in some arguments point to, for failure reports."""
        if isinstance(value, Ref):
            if value.which != "hidden" or value.kind not in KINDS:
                return []
            pk = self.attacked.hidden[value.kind][value.key]
            return [f"{value.kind}_{pk} = {self.attacked.names.get((value.kind, pk), '?')}"]
        items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
        return [line for item in items for line in self.describe(item)]

    def client(self, role: str) -> APIClient:
        if role not in self._clients:
            self._clients[role] = APIClient()
            self._clients[role].credentials(HTTP_AUTHORIZATION=f"Bearer {self.world.tokens[role]}")
        return self._clients[role]

    def run(self, target: Target, args: dict[str, Any], role: str = "member", *, keep: bool = False) -> Answer:
        """Call the target as ``role`` with concrete arguments; rolled back unless ``keep``."""
        cache.clear()  # keyword statistics are cached per organisation: each call computes its own
        with transaction.atomic():
            answer = self._call(target, args, role)
            transaction.set_rollback(not keep)
        return answer

    def _call(self, target: Target, args: dict[str, Any], role: str) -> Answer:
        actor = self.world.actor(role)
        if target.method:
            return self._rest(target, args, role)
        if target.tool:
            outcome = execute(actor, TOOLS[target.tool], args)
            if outcome.output is None:
                return Answer(outcome.status, outcome.code, None, outcome.message)
            return Answer(200, "", outcome.output.model_dump(mode="json"), outcome.output.to_text())
        spec = PROMPTS[target.name.removeprefix("prompt:")]
        try:
            return Answer(200, "", None, spec.fn(actor, args))
        except DomainError as exc:
            return Answer(exc.status, exc.code, None, exc.message)

    def _rest(self, target: Target, args: dict[str, Any], role: str) -> Answer:
        path, rest = target.path or "", dict(args)
        for name in re.findall(r"{(\w+)}", path):
            path = path.replace("{" + name + "}", str(rest.pop(name, "")))
        client = self.client(role)
        if target.method == "get":
            query = {k: _query_value(v) for k, v in rest.items() if not isinstance(v, list | dict)}
            response = client.get(path, query)
        elif target.method == "delete":
            response = client.delete(path)
        else:
            assert target.method is not None, target.name
            response = client.generic(target.method.upper(), path, json.dumps(rest), "application/json")
        body = response.json() if response.get("Content-Type", "").startswith("application/json") else None
        code = body.get("code", "") if isinstance(body, dict) and response.status_code >= 400 else ""
        return Answer(response.status_code, code, body, "" if body is not None else response.content.decode())


def _query_value(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def pool_of(a: Sight, twin: Sight, sample: int = 4) -> Pool:
    """Refs both sides can fill: every hidden id of A and B, and visible keys the twins share (every
    entity, where names merge; a few of the other kinds, whose ids the range test walks anyway)."""
    visible = {}
    for kind in KINDS:
        shared, ids = [], set()
        for key, pk in a.visible[kind].items():
            if key in twin.visible[kind] and pk not in ids:
                shared.append(key)
                ids.add(pk)
        visible[kind] = shared if kind == "ent" else shared[:sample]
    hidden = {kind: len(ids) for kind, ids in a.hidden.items()} | {k: len(v) for k, v in a.hidden_literals.items()}
    return Pool(hidden=hidden, visible=visible)


# --- reading answers ----------------------------------------------------------------------


def _steady(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    return value


def normalised(answer: Answer, asked: str | None = None) -> str:
    """The answer with times, timings and ids made comparable: ids are numbered by first appearance,
    and ``asked`` (the id a refusal is about) is written as <asked>."""
    body = json.dumps(_steady(answer.body), sort_keys=True, ensure_ascii=False, indent=1)
    text = f"{answer.status} {answer.code}\n{body}\n--- text\n{answer.text}"
    if asked:
        text = re.sub(rf"\b{re.escape(asked)}\b", "<asked>", text)
    text = TIME.sub("<time>", text)
    seen: dict[str, str] = {}
    return PUBLIC_ID.sub(lambda m: seen.setdefault(m.group(0), f"<{m.group(1) or m.group(2)} {len(seen) + 1}>"), text)


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [s for item in items for s in strings(item)]


def leaks(answer: Answer, sent: Any) -> list[str]:
    """Secret words in the answer that the caller did not send themselves."""
    asked = " ".join(strings(sent)).lower()
    received = (json.dumps(answer.body, ensure_ascii=False) + "\n" + answer.text).lower()
    return [word for word in SECRET_WORDS if word.lower() not in asked and word.lower() in received]


def difference(expected: str, got: str, limit: int = 16) -> str:
    lines = list(difflib.unified_diff(expected.splitlines(), got.splitlines(), "twin", "A", n=1, lineterm=""))[2:]
    return "\n".join(lines[:limit] + (["    …"] if len(lines) > limit else []))


def differential(case: Case, a: Side, twin: Side) -> str | None:
    """None when A's member gets what the twin's member gets and no secret word; else what went wrong."""
    sent = a.concrete(case.args)
    got, expected = a.run(case.target, sent), twin.run(case.target, twin.concrete(case.args))
    problems = []
    shown = leaks(got, sent)
    if shown:
        problems.append(f"shows {', '.join(shown)}")
    if normalised(got) != normalised(expected):
        diff = difference(normalised(expected), normalised(got))
        problems.append(f"differs from the twin without the hidden content:\n{diff}")
    if not problems:
        return None
    about = "".join(f"\n    ({line})" for line in a.describe(case.args))
    return f"{case.target.name} [{case.label}] {json.dumps(sent, ensure_ascii=False)[:300]}{about}\n  " + "\n  ".join(
        problems
    )
