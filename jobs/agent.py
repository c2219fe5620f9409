"""Agent and chat runs with a configured model (OpenAI-compatible chat completions with tool calls).

Agent mode is a bounded loop: the model sees the run's tools (``jobs.grants``: the read-only
ones and the write tools the owner granted, ``remember`` only when the job's memory is not off,
and ``delegate``), calls them through ``execute`` as the run's actor, and writes the report.
Steps, seconds and tokens are bounded (``BRAIN_JOB_MAX_STEPS``, ``BRAIN_JOB_MAX_SECONDS``,
``BRAIN_JOB_MAX_TOKENS``); a run that reaches a bound reports what it had.
``delegate(task, context)`` runs a worker with the same tools and returns its final report; a
worker cannot delegate, and a run delegates at most ``MAX_DELEGATIONS`` times. Chat mode is one
reply to the prompt with the evidence ``ask_company_memory`` returns for it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
from django.conf import settings

from brain.core.actors import Actor
from brain.core.selectors import enabled_features
from brain.mcp.invoke import execute
from brain.mcp.registry import TOOLS, is_visible, visible_tools
from jobs.grants import may_call
from jobs.models import Job

MAX_DELEGATIONS = 3
DELEGATE = {
    "type": "function",
    "function": {
        "name": "delegate",
        "description": "Hand a self-contained sub-task to a worker with the same tools; returns its final report.",
        "parameters": {
            "type": "object",
            "properties": {
                "task": {"type": "string", "description": "Complete instructions, with names, ids and dates."},
                "context": {"type": "string", "description": "Facts from this run the worker needs."},
            },
            "required": ["task"],
        },
    },
}
SYSTEM = (
    "You run a scheduled job for {owner} in {org}'s company memory. Use the tools to find evidence, then "
    "write the report the prompt asks for, citing the titles you used. Say plainly what you could not find."
)


class ModelError(Exception):
    """The model endpoint failed or answered something unusable."""


@dataclass
class Budget:
    steps: int
    deadline: float
    tokens: int
    delegations: int = MAX_DELEGATIONS
    used_tokens: int = 0
    calls: list[dict[str, Any]] = field(default_factory=list)

    def exhausted(self) -> str:
        if self.steps <= 0:
            return "the step limit"
        if time.monotonic() > self.deadline:
            return "the time limit"
        if self.used_tokens >= self.tokens:
            return "the token limit"
        return ""


def configured() -> bool:
    return bool(settings.BRAIN_LLM_URL)


def _complete(job: Job, messages: list[dict[str, Any]], tools: list[dict[str, Any]], budget: Budget) -> dict[str, Any]:
    model = settings.BRAIN_LLM_MODEL if job.model == "auto" else job.model
    headers = {"Authorization": f"Bearer {settings.BRAIN_LLM_KEY}"} if settings.BRAIN_LLM_KEY else {}
    body: dict[str, Any] = {"model": model, "messages": messages}
    if tools:
        body["tools"] = tools
    try:
        response = httpx.post(
            settings.BRAIN_LLM_URL.rstrip("/") + "/chat/completions",
            json=body,
            headers=headers,
            timeout=max(1.0, budget.deadline - time.monotonic()),
        )
        response.raise_for_status()
        answer = response.json()
        budget.used_tokens += int((answer.get("usage") or {}).get("total_tokens") or 0)
        return dict(answer["choices"][0]["message"])
    except (httpx.HTTPError, KeyError, IndexError, ValueError, TypeError) as exc:
        raise ModelError(f"the model endpoint failed: {exc}") from exc


def _tools_for(actor: Actor, job: Job, *, worker: bool) -> list[dict[str, Any]]:
    offered = []
    for spec in visible_tools(scopes=actor.scopes, features=enabled_features(actor=actor)):
        if not may_call(job, spec):
            continue
        offered.append(
            {
                "type": "function",
                "function": {
                    "name": spec.name,
                    "description": spec.description[:1000],
                    "parameters": spec.input_schema(),
                },
            }
        )
    return offered if worker else [*offered, DELEGATE]


def _call_tool(
    actor: Actor, job: Job, name: str, arguments: dict[str, Any], budget: Budget, *, worker: bool, activity: str | None
) -> str:
    if name == "delegate" and not worker:
        if budget.delegations <= 0:
            return "delegate refused: this run has used all its delegations."
        budget.delegations -= 1
        budget.calls.append({"tool": "delegate", "arguments": arguments, "ok": True})
        task = f"{arguments.get('task', '')}\n\nContext: {arguments.get('context', '')}".strip()
        return loop(actor, job, task, budget, worker=True, activity=activity)
    if (
        name not in TOOLS
        or not may_call(job, TOOLS[name])
        or not is_visible(TOOLS[name], scopes=actor.scopes, features=enabled_features(actor=actor))
    ):
        return f"{name} is not a tool of this run."
    if name == "remember":
        arguments = {**arguments, "scope": "shared" if job.memory == Job.Memory.ORG else "personal"}
    if activity and "activity_id" in TOOLS[name].args.model_fields:
        arguments = {**arguments, "activity_id": activity}
    outcome = execute(actor, TOOLS[name], arguments)
    budget.calls.append({"tool": name, "arguments": arguments, "ok": outcome.output is not None})
    return outcome.output.to_text()[:20_000] if outcome.output is not None else f"{outcome.code}: {outcome.message}"


def loop(
    actor: Actor, job: Job, prompt: str, budget: Budget, *, worker: bool = False, activity: str | None = None
) -> str:
    """The model's report for ``prompt`` after at most the budget's steps of tool calls."""
    owner = actor.user.get_full_name() or actor.user.get_username()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM.format(owner=owner, org=actor.org.name)},
        {"role": "user", "content": prompt},
    ]
    tools = _tools_for(actor, job, worker=worker)
    notes: list[str] = []
    while not (bound := budget.exhausted()):
        budget.steps -= 1
        message = _complete(job, messages, tools, budget)
        calls = message.get("tool_calls") or []
        if not calls:
            return str(message.get("content") or "")
        messages.append({"role": "assistant", "content": message.get("content"), "tool_calls": calls})
        for call in calls:
            function = call.get("function") or {}
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except json.JSONDecodeError:
                arguments = None
            result = (
                _call_tool(actor, job, str(function.get("name")), arguments, budget, worker=worker, activity=activity)
                if isinstance(arguments, dict)
                else "The arguments were not a JSON object."
            )
            notes.append(f"{function.get('name')}: {result[:300]}")
            messages.append({"role": "tool", "tool_call_id": call.get("id"), "content": result})
    return f"The run stopped at {bound} before the model wrote its report. What it had:\n\n" + "\n".join(
        f"- {note}" for note in notes
    )


def agent_run(actor: Actor, job: Job, activity: str | None) -> tuple[str, list[dict[str, Any]]]:
    budget = Budget(
        steps=settings.BRAIN_JOB_MAX_STEPS,
        deadline=time.monotonic() + settings.BRAIN_JOB_MAX_SECONDS,
        tokens=settings.BRAIN_JOB_MAX_TOKENS,
    )
    return loop(actor, job, job.prompt, budget, activity=activity), budget.calls


def chat_run(actor: Actor, job: Job, activity: str | None) -> tuple[str, list[dict[str, Any]]]:
    """One reply to the prompt with ask_company_memory's evidence for it."""
    budget = Budget(
        steps=1, deadline=time.monotonic() + settings.BRAIN_JOB_MAX_SECONDS, tokens=settings.BRAIN_JOB_MAX_TOKENS
    )
    evidence = _call_tool(
        actor, job, "ask_company_memory", {"question": job.prompt[:4000]}, budget, worker=True, activity=activity
    )
    messages = [
        {"role": "system", "content": SYSTEM.format(owner=actor.user.get_username(), org=actor.org.name)},
        {"role": "user", "content": f"{job.prompt}\n\nEvidence from company memory:\n{evidence}"},
    ]
    return str(_complete(job, messages, [], budget).get("content") or ""), budget.calls
