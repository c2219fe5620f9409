"""MCP prompts: memory gathered server-side into one message, for slash commands in clients."""

from __future__ import annotations

from brain.core.actors import Actor
from brain.mcp.registry import mcp_prompt
from memory.graph import reads as graph
from memory.graph.entity_views import entity_views
from memory.mcp_tools.shapes import FactOut, fact_outs
from memory.search.passages import search_chunks


def _facts(title: str, facts: list[FactOut]) -> str:
    return f"{title}:\n" + ("\n".join(f"- {f.line()}" for f in facts) or "- none")


@mcp_prompt("catch_me_up", title="Catch me up")
def catch_me_up(actor: Actor, arguments: dict[str, str]) -> str:
    """What came into company memory most recently, so a new session starts current."""
    episodes = graph.recent_documents(actor=actor, limit=15)
    lines = [
        f"- {d.recorded_at:%Y-%m-%d} [{d.source_kind}] {d.title}: {' '.join(d.content.split())[:200]}" for d in episodes
    ]
    recent = graph.timeline(actor=actor, limit=15)
    return (
        "Here is what Brain recorded most recently. Summarise what changed for me, citing titles.\n\n"
        "Newest content:\n"
        + ("\n".join(lines) or "- nothing yet")
        + "\n\n"
        + _facts("Newest facts", fact_outs(actor, list(reversed(recent))))
    )


@mcp_prompt("recall", title="Recall a topic", arguments=(("topic", "What to recall everything about", True),))
def recall(actor: Actor, arguments: dict[str, str]) -> str:
    """Everything Brain holds on one topic: passages, facts, and the entity's neighbourhood."""
    topic = arguments["topic"].strip()[:500]
    passages = search_chunks(actor=actor, query=topic, top_k=10).hits
    facts = fact_outs(actor, [s.fact for s in graph.search_facts(actor=actor, query=topic, limit=10)])
    parts = [f"Everything Brain holds on: {topic}. Answer from this and say what is missing."]
    parts.append(
        "Passages:\n" + ("\n".join(f"- {h.title} (doc_{h.document_id}): {h.text[:400]}" for h in passages) or "- none")
    )
    parts.append(_facts("Facts", facts))
    found = graph.find_entities(actor=actor, name=topic, limit=1)
    views = entity_views(actor=actor, entity_ids=found)
    if found and found[0] in views:
        hood = graph.explore(actor=actor, entity=views[found[0]], limit=15)
        parts.append(_facts(f"About {hood.entity.name}", fact_outs(actor, hood.outgoing + hood.incoming)))
    return "\n\n".join(parts)


@mcp_prompt("company_context", title="Company context")
def company_context(actor: Actor, arguments: dict[str, str]) -> str:
    """A broad orientation: what memory holds, the most connected entities and their key facts."""
    data = graph.overview(actor=actor)
    parts = [
        f"Orientation on {actor.org.name}'s memory: {data.documents} documents, {data.facts} current facts, "
        f"{data.entities} entities; sources {data.by_source_kind}.",
    ]
    for entity, _count in data.top_entities[:6]:
        hood = graph.explore(actor=actor, entity=entity, limit=5)
        parts.append(_facts(f"{entity.name} ({entity.type})", fact_outs(actor, hood.outgoing + hood.incoming)))
    recent = graph.recent_documents(actor=actor, limit=5)
    parts.append("Latest content:\n" + ("\n".join(f"- {d.title}" for d in recent) or "- nothing yet"))
    return "\n\n".join(parts)
