"""request_human_info: ask a configured contact for what Brain does not know."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from brain.core.actors import Actor
from brain.core.errors import InvalidArgument
from brain.infra.mail import NOT_SET_UP
from brain.mcp.registry import ToolOutput, mcp_tool
from contacts import services
from contacts.models import HumanRequest
from contacts.undelivered import undelivered

BACKGROUND = (
    "The request runs in the background and can take several minutes (or longer for the person to answer). "
    "Tell the user so and offer to carry on with something else; the answer shows under My requests."
)


class RequestArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, max_length=4000, description="The question to ask (up to 4,000).")
    dispatch: bool = Field(False, description="false: preview, nothing is sent. true: send to the previewed contact.")
    activity_id: str | None = Field(None, max_length=80, description="The activity of the answer this follows from.")
    gap_analysis: str = Field("", max_length=8000, description="What Brain's answer was missing (up to 8,000).")
    allowed_channel_types: list[Literal["call", "email", "slack", "whatsapp"]] | None = Field(
        None, description="Only these channels may be used."
    )
    requested_contact_id: str | None = Field(None, max_length=40, description="The contact the preview returned.")
    requested_contact_name: str | None = Field(
        None, max_length=200, description="Only when the user explicitly named the person to ask."
    )
    requester_directed: bool = Field(
        False,
        description="true only when the user asked to be contacted themselves; needs dispatch and the contact id.",
    )


class ContactOut(BaseModel):
    contact_id: str
    name: str
    channel: str
    topics: str


class RequestOut(ToolOutput):
    status: Literal["preview", "queued", "not_sent"]
    contact: ContactOut
    request_id: str | None = None
    message: str
    answer_link: str | None = Field(
        None, description="Only when not_sent: the link for the user to pass on to the person; it lets them answer."
    )

    def to_text(self) -> str:
        who = f"{self.contact.name} ({self.contact.contact_id}) over {self.contact.channel}"
        if self.status == "preview":
            return f"Preview, nothing sent. Brain would ask {who}. {self.message}"
        if self.status == "not_sent":
            return f"NOT sent: {self.contact.name} was not reached. Kept as {self.request_id}. {self.message}"
        return f"Queued {self.request_id} to {who}. {self.message}"


@mcp_tool(
    "request_human_info",
    title="Request Information from a Person",
    args=RequestArgs,
    output=RequestOut,
    scope="write",
    destructive=True,
    open_world=True,
    writes="shared",
)
def request_human_info_tool(actor: Actor, args: RequestArgs) -> RequestOut:
    """Ask a colleague who is set up as a contact for information Brain does not have. Always
    preview first (dispatch false): nothing is sent, and Brain returns the contact it would ask;
    name only that contact to the user, never a person guessed from documents or the chat. If the
    user named someone, pass requested_contact_name; if they are not a configured contact, tell the
    user. After the user confirms, call again with dispatch true and requested_contact_id from the
    preview. Exception: when the user asked to be contacted themselves, their request is the
    confirmation: preview, check the contact is them, then dispatch with requester_directed true;
    if the preview picks someone else, do not send it to that person. Dispatch runs in the
    background and can take minutes. Where no mail server is set up, a dispatch by email returns
    not_sent with an answer_link: the person was not reached, and the user passes the link on.
    Pass the same activity_id in the preview and the dispatch."""
    if args.requester_directed and not (args.dispatch and args.requested_contact_id):
        raise InvalidArgument(
            "requester_directed needs dispatch true and the requested_contact_id of a preview that returned the "
            "user's own contact; nothing was sent."
        )
    if not args.dispatch:
        return _preview(actor, args)
    if not args.requested_contact_id:
        raise InvalidArgument(
            "Preview first (dispatch false) and pass the contact it returns as requested_contact_id; nothing was sent."
        )
    request = services.dispatch_request(
        actor=actor,
        question=args.question,
        contact_id=services.parse_contact_id(args.requested_contact_id),
        gap_analysis=args.gap_analysis,
        allowed=args.allowed_channel_types,
        activity_id=args.activity_id,
        requester_directed=args.requester_directed,
    )
    contact = ContactOut(
        contact_id=request.contact.public_id,
        name=request.contact.name,
        channel=request.channel,
        topics=request.contact.topics,
    )
    if request.status == HumanRequest.Status.NOT_SENT:
        return _not_sent(request, contact)
    return RequestOut(status="queued", contact=contact, request_id=request.public_id, message=BACKGROUND)


def _not_sent(request: HumanRequest, contact: ContactOut) -> RequestOut:
    """Kept without a mail server: the link goes to the asker, who called this tool, and to nobody else."""
    found = undelivered(request)
    link = found.link if found is not None else ""
    message = (
        f"{NOT_SET_UP} on this Brain, so {contact.name} was not emailed and does not know about the question. "
        f"Tell the user plainly, and give them this link to pass on to {contact.name} themselves (a chat message, "
        f"another mail); whoever opens it can answer: {link} . It is also on the user's My requests page, where "
        "the answer will show."
    )
    return RequestOut(
        status="not_sent", contact=contact, request_id=request.public_id, message=message, answer_link=link or None
    )


def _preview(actor: Actor, args: RequestArgs) -> RequestOut:
    chosen = services.route(
        actor=actor,
        question=args.question,
        allowed=args.allowed_channel_types,
        contact_name=args.requested_contact_name,
    )
    contact = ContactOut(
        contact_id=chosen.contact.public_id,
        name=chosen.contact.name,
        channel=chosen.channel,
        topics=chosen.contact.topics,
    )
    if services.unsendable(chosen.channel):
        message = (
            f"{NOT_SET_UP} on this Brain: a dispatch stores the question but does not email "
            f"{chosen.contact.name}; it returns a link for the user to pass on. "
        )
    else:
        message = ""
    if chosen.contact.user_id == actor.user.pk:
        message += (
            "This contact is the user. If they asked to be contacted themselves, dispatch now with "
            "requester_directed true; otherwise ask them to confirm first."
        )
    else:
        message += "Ask the user to confirm before dispatching to this person."
    return RequestOut(status="preview", contact=contact, message=message)
