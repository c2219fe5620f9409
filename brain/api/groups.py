"""What each REST endpoint is for: the groups the API docs show, in their order, and each tool's group.

Every operation carries exactly one of these groups as its OpenAPI tag. A tool's view looks its
group up here (``brain.api.tools.tool_view``), so a route for a tool missing from ``TOOL_GROUPS``
fails as the URLs load; a view that is not a tool names its group with one of the constants.
Tools are named by string: brain/ does not import the apps that register them.
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

ACCOUNT = "Account and usage"
SEARCH = "Search and read"
ENTITIES = "Entities and facts"
REMEMBER = "Remember and documents"
REGISTERS = "Registers"
JOBS = "Jobs"

GROUPS: tuple[tuple[str, str], ...] = (
    (
        ACCOUNT,
        "Start here: the rules for using Brain, whether it is up, who the token acts for, this month's usage; "
        "grouping calls into one activity, and reporting an issue or sending feedback.",
    ),
    (
        SEARCH,
        "Find and read what the organisation knows: search, retrieve passages, ask a question, "
        "an overview, the newest content and how knowledge changed over time.",
    ),
    (
        ENTITIES,
        "People, companies, projects and the other things memory knows about: find one, explore its "
        "connections, search the facts stated about them and compare their recorded values.",
    ),
    (
        REMEMBER,
        "Add to memory and take out of it: remember or forget one memory, save documents and follow their processing.",
    ),
    (
        REGISTERS,
        "The organisation's registers: who promised what and by when, things it believes that cannot both be "
        "true, and the glossary of its own words.",
    ),
    (
        JOBS,
        "Work Brain does later or on a schedule: list jobs and their runs, schedule once or to repeat, "
        "pause, run now, change or delete.",
    ),
)

TOOL_GROUPS: dict[str, str] = {
    "init": ACCOUNT,
    "health": ACCOUNT,
    "get_profile": ACCOUNT,
    "start_company_memory_activity": ACCOUNT,
    "report_issue": ACCOUNT,
    "send_feedback": ACCOUNT,
    "search_company_memory": SEARCH,
    "retrieve_company_memory": SEARCH,
    "ask_company_memory": SEARCH,
    "get_schema": SEARCH,
    "recent_episodes": SEARCH,
    "memory_timeline": SEARCH,
    "find_entity": ENTITIES,
    "explore_entity": ENTITIES,
    "search_facts": ENTITIES,
    "lookup_values": ENTITIES,
    "remember": REMEMBER,
    "forget": REMEMBER,
    "list_commitments": REGISTERS,
    "record_commitment": REGISTERS,
    "update_commitment": REGISTERS,
    "list_contradictions": REGISTERS,
    "raise_contradiction": REGISTERS,
    "answer_contradiction": REGISTERS,
    "glossary": REGISTERS,
    "define_term": REGISTERS,
    "update_term": REGISTERS,
    "list_jobs": JOBS,
    "schedule_once": JOBS,
    "schedule_job": JOBS,
    "update_job": JOBS,
}

_NAMES = {name for name, _ in GROUPS}
if unknown := {group for group in TOOL_GROUPS.values() if group not in _NAMES}:
    raise ImproperlyConfigured(f"TOOL_GROUPS names groups that GROUPS does not declare: {sorted(unknown)}")

# SPECTACULAR_SETTINGS["TAGS"]: the order and one-line description the docs show for each group.
OPENAPI_TAGS: list[dict[str, str]] = [{"name": name, "description": description} for name, description in GROUPS]


def group_of(tool: str) -> str:
    """The group of a tool's REST route; a tool without one is refused, so no route goes untagged."""
    try:
        return TOOL_GROUPS[tool]
    except KeyError:
        raise ImproperlyConfigured(
            f"The REST route for tool {tool!r} has no group: add it to TOOL_GROUPS in brain/api/groups.py"
        ) from None
