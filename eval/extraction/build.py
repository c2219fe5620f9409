"""Writes docs.jsonl and labels.jsonl of the extraction set from the documents and labels below.

    python eval/extraction/build.py

Every text here was written for this set; the people, companies and events are made up. Dates in
the labels are computed from each document's own moment by the two helpers, so a label never
depends on the day the set is built or loaded.
"""

# ruff: noqa: N802, E501 (one-letter label helpers keep the labels readable; statements are written as one line)
from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]


def coming(base: str, weekday: str) -> str:
    """The first such weekday after ``base`` ("by Friday" said on a Monday: that week's Friday)."""
    day = date.fromisoformat(base[:10])
    ahead = (WEEKDAYS.index(weekday) - day.weekday()) % 7 or 7
    return str(day + timedelta(days=ahead))


def plus(base: str, days: int) -> str:
    return str(date.fromisoformat(base[:10]) + timedelta(days=days))


def F(statement: str, subject: str | None, kind: str = "fact", vf: str | None = None, vt: str | None = None) -> dict:
    return {"statement": statement, "subject": subject, "kind": kind, "valid_from": vf, "valid_to": vt}


def T(text: str, value: str | None) -> dict:
    return {"text": text, "value": value}


def E(name: str, *kinds: str) -> dict:
    return {"name": name, "kind": list(kinds) if len(kinds) > 1 else kinds[0]}


def P(owner: str, what: str, due: str | None = None, key: str | None = None) -> dict:
    return {"owner": owner, "what": what, "due_on": due, **({"key": key} if key else {})}


CUSTOMER = ("customer", "organisation")
SUPPLIER = ("organisation",)  # Brain has no supplier kind: a supplier is an organisation
SYSTEM = ("system", "product")

# Recurring people and things.
MARTA, TOM, PRIYA, JONAS = "Marta Ruiz", "Tom Becker", "Priya Shah", "Jonas Weber"
AIKO, SAM, LENA, OMAR, CHLOE, DIEGO = (
    "Aiko Tanaka",
    "Samuel Osei",
    "Lena Fischer",
    "Omar Haddad",
    "Chloé Martin",
    "Diego Alves",
)

DOCS: list[dict[str, Any]] = []
LABELS: dict[str, dict[str, Any]] = {}


def doc(
    id: str,
    kind: str,
    title: str,
    text: str,
    saved_at: str,
    *,
    facts: list,
    times: list = (),
    entities: list = (),
    promises: list = (),
    **extra: Any,
) -> None:
    DOCS.append({"id": id, "kind": kind, "title": title, "text": text.strip() + "\n", "saved_at": saved_at, **extra})
    LABELS[id] = {
        "id": id,
        "facts": facts,
        "times": list(times),
        "entities": list(entities),
        "promises": list(promises),
    }


def mail(
    id: str, title: str, sender: str, to: str, sent: str, header_date: str, body: str, saved_at: str, **kw: Any
) -> None:
    head = f"From: {sender}\nTo: {to}\nDate: {header_date}\nSubject: {title}\n\n"
    doc(id, "mail", title, head + body, saved_at, **kw)


# --- mail: headers, quoted replies, signatures; saved without occurred_at, so the Date header is the moment ---

D = "2025-11-24"
mail(
    "mail-01",
    "Re: Northwind renewal quote",
    "Marta Ruiz <marta.ruiz@kestrel.example>",
    "Tom Becker <tom.becker@kestrel.example>",
    D,
    "Mon, 24 Nov 2025 09:12:40 +0100",
    """
Hi Tom,

Northwind accepted the new price of EUR 48,000 a year for Kestrel Dispatch.
The renewal starts on 1 January 2026 and runs for two years.
I will send the revised quote to Northwind by Friday.
Their purchasing lead, Anna Lind, wants the invoice addressed to the Malmö office.

Best,
Marta

--
Marta Ruiz | Account Manager | Kestrel Systems
+34 600 123 456

On Fri, 21 Nov 2025 at 17:03, Tom Becker wrote:
> Any news from Northwind on the renewal?
""",
    "2026-12-02T08:30:00+00:00",
    facts=[
        F("Northwind accepted the new price of EUR 48,000 a year for Kestrel Dispatch.", "Northwind", "event"),
        F("The Northwind renewal starts on 1 January 2026 and runs for two years.", "Northwind", "fact", "2026-01-01"),
        F("Marta Ruiz will send the revised quote to Northwind by Friday.", MARTA, "decision", None, coming(D, "fri")),
        F(
            "Anna Lind, Northwind's purchasing lead, wants the invoice addressed to the Malmö office.",
            "Anna Lind",
            "preference",
        ),
    ],
    times=[T("on 1 January 2026", "2026-01-01"), T("by Friday", coming(D, "fri"))],
    entities=[
        E(MARTA, "person"),
        E(TOM, "person"),
        E("Northwind", *CUSTOMER),
        E("Kestrel Dispatch", "product"),
        E("Anna Lind", "person"),
        E("Malmö", "place"),
        E("Kestrel Systems", "organisation"),
    ],
    promises=[P(MARTA, "Marta Ruiz will send the revised quote to Northwind", coming(D, "fri"), "northwind-quote")],
)

D = "2025-11-17"
mail(
    "mail-02",
    "Invoice run moved",
    "Lena Fischer <lena.fischer@kestrel.example>",
    "finance@kestrel.example",
    D,
    "Mon, 17 Nov 2025 14:05:00 +0100",
    """
Hello all,

From December the monthly invoice run moves from the 1st to the 3rd working day of the month.
Okapi Print will print and post the paper invoices, replacing Druckhaus Berg.
Okapi Print charges EUR 0.42 per letter.
I'll update the finance wiki page tomorrow.

Thanks,
Lena Fischer
Finance Operations
""",
    "2026-12-02T08:31:00+00:00",
    facts=[
        F(
            "From December the monthly invoice run moves from the 1st to the 3rd working day of the month.",
            None,
            "decision",
            "2025-12-01",
        ),
        F("Okapi Print will print and post the paper invoices, replacing Druckhaus Berg.", "Okapi Print", "decision"),
        F("Okapi Print charges EUR 0.42 per letter.", "Okapi Print", "fact"),
        F("Lena Fischer will update the finance wiki page tomorrow.", LENA, "decision", None, plus(D, 1)),
    ],
    times=[T("From December", "2025-12-01"), T("tomorrow", plus(D, 1))],
    entities=[E(LENA, "person"), E("Okapi Print", *SUPPLIER), E("Druckhaus Berg", *SUPPLIER)],
    promises=[P(LENA, "Lena Fischer will update the finance wiki page", plus(D, 1))],
)

D = "2025-11-26"
mail(
    "mail-03",
    "Halvorsen Foods outage follow-up",
    "Priya Shah <priya.shah@kestrel.example>",
    "Jonas Weber <jonas.weber@kestrel.example>",
    D,
    "Wed, 26 Nov 2025 11:40:00 +0000",
    """
Jonas,

Halvorsen Foods lost access to Kestrel Ledger for 47 minutes yesterday.
The cause was an expired TLS certificate on the Rotterdam load balancer.
Their CFO, Erik Halvorsen, asked for a written incident report by Monday.
I'll write the report and send it to Erik Halvorsen by Monday.
We agreed to add certificate expiry checks to the Platform team's monitoring.

Priya

Sent from my phone
""",
    "2026-12-02T08:32:00+00:00",
    facts=[
        F(
            "Halvorsen Foods lost access to Kestrel Ledger for 47 minutes yesterday.",
            "Halvorsen Foods",
            "event",
            plus(D, -1),
        ),
        F(
            "The cause of the Halvorsen Foods outage was an expired TLS certificate on the Rotterdam load balancer.",
            None,
            "fact",
        ),
        F(
            "Erik Halvorsen, the CFO of Halvorsen Foods, asked for a written incident report by Monday.",
            "Erik Halvorsen",
            "event",
            None,
            coming(D, "mon"),
        ),
        F(
            "Priya Shah will write the incident report and send it to Erik Halvorsen by Monday.",
            PRIYA,
            "decision",
            None,
            coming(D, "mon"),
        ),
        F(
            "Priya Shah and Jonas Weber agreed to add certificate expiry checks to the Platform team's monitoring.",
            "Platform team",
            "decision",
        ),
    ],
    times=[T("yesterday", plus(D, -1)), T("by Monday", coming(D, "mon"))],
    entities=[
        E(PRIYA, "person"),
        E(JONAS, "person"),
        E("Halvorsen Foods", *CUSTOMER),
        E("Kestrel Ledger", "product"),
        E("Rotterdam", "place"),
        E("Erik Halvorsen", "person"),
        E("Platform team", "team"),
    ],
    promises=[
        P(
            PRIYA,
            "Priya Shah will write the incident report and send it to Erik Halvorsen",
            coming(D, "mon"),
            "halvorsen-report",
        )
    ],
)

D = "2025-11-03"
mail(
    "mail-04",
    "Re: Re: Lyon office lease",
    "Omar Haddad <omar.haddad@kestrel.example>",
    "Chloé Martin <chloe.martin@kestrel.example>",
    D,
    "Mon, 3 Nov 2025 16:22:00 +0100",
    """
Chloé,

The landlord agreed to extend the Lyon office lease until 31 March 2027.
The rent stays at EUR 6,200 a month.
Facilities will move the Lyon team to the second floor in January.

Omar

> On 31 Oct 2025, Chloé Martin wrote:
> Can you ask the landlord whether the rent changes if we extend?
>> On 30 Oct 2025, Omar Haddad wrote:
>> The lease ends in December.
""",
    "2026-12-02T08:33:00+00:00",
    facts=[
        F(
            "The landlord agreed to extend the Lyon office lease until 31 March 2027.",
            "Lyon office",
            "decision",
            None,
            "2027-03-31",
        ),
        F("The Lyon office rent stays at EUR 6,200 a month.", "Lyon office", "fact"),
        F("Facilities will move the Lyon team to the second floor in January.", "Lyon team", "decision", "2026-01-01"),
    ],
    times=[T("until 31 March 2027", "2027-03-31"), T("in January", "2026-01-01")],
    entities=[E(OMAR, "person"), E(CHLOE, "person"), E("Lyon", "place"), E("Lyon team", "team")],
)

D = "2025-12-01"
mail(
    "mail-05",
    "Brightline pilot kickoff",
    "Diego Alves <diego.alves@kestrel.example>",
    "Marta Ruiz <marta.ruiz@kestrel.example>",
    D,
    "Mon, 1 Dec 2025 08:55:00 +0000",
    """
Marta,

Brightline Logistics signed the pilot for Kestrel Dispatch at three depots: Porto, Lisbon and Braga.
The pilot runs from 8 December 2025 to 30 January 2026.
Their project lead is Rui Costa.
I'll set up the pilot accounts by Thursday.
Can you book the kickoff call with Rui for next week?

Cheers,
Diego

Diego Alves
Solutions Engineer, Kestrel Systems
This e-mail and any attachments are confidential.
""",
    "2026-12-02T08:34:00+00:00",
    facts=[
        F(
            "Brightline Logistics signed the pilot for Kestrel Dispatch at three depots: Porto, Lisbon and Braga.",
            "Brightline Logistics",
            "event",
        ),
        F(
            "The Brightline Logistics pilot runs from 8 December 2025 to 30 January 2026.",
            "Brightline Logistics",
            "fact",
            "2025-12-08",
            "2026-01-30",
        ),
        F("Rui Costa is the project lead at Brightline Logistics.", "Rui Costa", "fact"),
        F("Diego Alves will set up the pilot accounts by Thursday.", DIEGO, "decision", None, coming(D, "thu")),
    ],
    times=[
        T("from 8 December 2025", "2025-12-08"),
        T("to 30 January 2026", "2026-01-30"),
        T("by Thursday", coming(D, "thu")),
    ],
    entities=[
        E(DIEGO, "person"),
        E(MARTA, "person"),
        E("Brightline Logistics", *CUSTOMER),
        E("Kestrel Dispatch", "product"),
        E("Porto", "place"),
        E("Lisbon", "place"),
        E("Braga", "place"),
        E("Rui Costa", "person"),
    ],
    promises=[
        P(DIEGO, "Diego Alves will set up the Brightline pilot accounts", coming(D, "thu"), "brightline-accounts")
    ],
)

D = "2025-11-10"
mail(
    "mail-06",
    "Hiring: two backend engineers",
    "Jonas Weber <jonas.weber@kestrel.example>",
    "Aiko Tanaka <aiko.tanaka@kestrel.example>",
    D,
    "Mon, 10 Nov 2025 10:00:00 +0100",
    """
Aiko,

The Platform team has budget for two backend engineers in Q1 2026.
Both roles are Django and Postgres heavy, and remote within the EU.
Samuel Osei will run the technical interviews.
I will post the job ads on Wednesday.

Regards,
Jonas
""",
    "2026-12-02T08:35:00+00:00",
    facts=[
        F(
            "The Platform team has budget for two backend engineers in Q1 2026.",
            "Platform team",
            "fact",
            "2026-01-01",
            "2026-03-31",
        ),
        F("Both backend roles are Django and Postgres heavy, and remote within the EU.", None, "fact"),
        F("Samuel Osei will run the technical interviews.", SAM, "decision"),
        F("Jonas Weber will post the job ads on Wednesday.", JONAS, "decision", coming(D, "wed")),
    ],
    times=[T("in Q1 2026", "2026-01-01"), T("on Wednesday", coming(D, "wed"))],
    entities=[
        E(JONAS, "person"),
        E(AIKO, "person"),
        E("Platform team", "team"),
        E("Django", *SYSTEM),
        E("Postgres", *SYSTEM),
        E(SAM, "person"),
    ],
    promises=[P(JONAS, "Jonas Weber will post the backend job ads", coming(D, "wed"))],
)

D = "2025-11-19"
mail(
    "mail-07",
    "Fwd: Verdant Cloud price change",
    "Tom Becker <tom.becker@kestrel.example>",
    "Jonas Weber <jonas.weber@kestrel.example>",
    D,
    "Wed, 19 Nov 2025 13:30:00 +0100",
    """
FYI, see below. Can we review hosting costs before the change?

Tom

---------- Forwarded message ---------
From: Verdant Cloud Billing <billing@verdant.example>
Date: Tue, 18 Nov 2025
Subject: Price change

Dear customer,
From 1 February 2026 the price of a standard compute node rises from EUR 310 to EUR 345 a month.
""",
    "2026-12-02T08:36:00+00:00",
    facts=[
        F(
            "From 1 February 2026 the price of a Verdant Cloud standard compute node rises from EUR 310 to EUR 345 a month.",
            "Verdant Cloud",
            "fact",
            "2026-02-01",
        ),
        F("Tom Becker wants to review hosting costs before the Verdant Cloud price change.", TOM, "preference"),
    ],
    times=[T("From 1 February 2026", "2026-02-01")],
    entities=[E(TOM, "person"), E(JONAS, "person"), E("Verdant Cloud", *SUPPLIER)],
)

D = "2025-11-24"
mail(
    "mail-08",
    "Support rota for December",
    "Priya Shah <priya.shah@kestrel.example>",
    "support@kestrel.example",
    D,
    "Mon, 24 Nov 2025 17:45:00 +0100",
    """
Hi team,

The support rota changes every Monday at 10:00.
In December Aiko Tanaka covers the first two weeks and Samuel Osei the rest.
Escalations go to the on-call engineer in the Platform team.
The office is closed from 24 December to 1 January.

Priya Shah
Head of Support
""",
    "2026-12-02T08:37:00+00:00",
    facts=[
        F("The support rota changes every Monday at 10:00.", "Support", "procedure"),
        F(
            "In December Aiko Tanaka covers the first two weeks of the support rota and Samuel Osei the rest.",
            AIKO,
            "fact",
            "2025-12-01",
            "2025-12-31",
        ),
        F("Escalations go to the on-call engineer in the Platform team.", None, "procedure"),
        F("The office is closed from 24 December to 1 January.", None, "fact", "2025-12-24", "2026-01-01"),
        F("Priya Shah is Head of Support.", PRIYA, "fact"),
    ],
    times=[
        T("every Monday at 10:00", None),
        T("In December", "2025-12-01"),
        T("from 24 December", "2025-12-24"),
        T("to 1 January", "2026-01-01"),
    ],
    entities=[
        E(PRIYA, "person"),
        E(AIKO, "person"),
        E(SAM, "person"),
        E("Platform team", "team"),
        E("Support", "team"),
    ],
)

D = "2025-11-27"
mail(
    "mail-09",
    "Re: Atlas migration date",
    "Samuel Osei <samuel.osei@kestrel.example>",
    "Jonas Weber <jonas.weber@kestrel.example>",
    D,
    "Thu, 27 Nov 2025 09:03:00 +0000",
    """
Jonas,

The Atlas migration moves to Saturday 6 December, starting at 22:00 CET.
The billing database will be read-only for about four hours.
I'll send the customer notice today.

Sam

On Wed, 26 Nov 2025, Jonas Weber wrote:
> Is the 29th still realistic for Atlas?
""",
    "2026-12-02T08:38:00+00:00",
    facts=[
        F(
            "The Atlas migration moves to Saturday 6 December, starting at 22:00 CET.",
            "Atlas migration",
            "decision",
            "2025-12-06",
        ),
        F("The billing database will be read-only for about four hours during the Atlas migration.", None, "fact"),
        F("Samuel Osei will send the customer notice today.", SAM, "decision", D),
    ],
    times=[T("Saturday 6 December", "2025-12-06"), T("today", D)],
    entities=[E(SAM, "person"), E(JONAS, "person"), E("Atlas migration", "project")],
    promises=[P(SAM, "Samuel Osei will send the customer notice about the Atlas migration", D, "atlas-notice")],
)

D = "2025-12-02"
mail(
    "mail-10",
    "Quarterly business review with Halvorsen Foods",
    "Marta Ruiz <marta.ruiz@kestrel.example>",
    "Priya Shah <priya.shah@kestrel.example>",
    D,
    "Tue, 2 Dec 2025 15:10:00 +0100",
    """
Priya,

The QBR with Halvorsen Foods is on 11 December in Bergen.
Erik Halvorsen will attend, together with their IT manager Kari Nord.
Halvorsen Foods wants to add 40 seats to Kestrel Ledger next year.
I'll prepare the usage report before the QBR.

Marta
""",
    "2026-12-02T08:39:00+00:00",
    facts=[
        F("The QBR with Halvorsen Foods is on 11 December in Bergen.", "Halvorsen Foods", "event", "2025-12-11"),
        F(
            "Erik Halvorsen will attend the QBR together with Kari Nord, the IT manager of Halvorsen Foods.",
            "Erik Halvorsen",
            "fact",
        ),
        F(
            "Halvorsen Foods wants to add 40 seats to Kestrel Ledger next year.",
            "Halvorsen Foods",
            "preference",
            "2026-01-01",
        ),
        F("Marta Ruiz will prepare the usage report before the QBR.", MARTA, "decision", None, "2025-12-11"),
    ],
    times=[T("on 11 December", "2025-12-11"), T("next year", "2026-01-01"), T("before the QBR", "2025-12-11")],
    entities=[
        E(MARTA, "person"),
        E(PRIYA, "person"),
        E("Halvorsen Foods", *CUSTOMER),
        E("Bergen", "place"),
        E("Erik Halvorsen", "person"),
        E("Kari Nord", "person"),
        E("Kestrel Ledger", "product"),
    ],
    promises=[P(MARTA, "Marta Ruiz will prepare the usage report for Halvorsen Foods", "2025-12-11")],
)


# --- meeting notes: a date in the title, an attendee line, decisions and action items; no occurred_at ---


def notes(id: str, title: str, body: str, saved_at: str, **kw: Any) -> None:
    doc(id, "meeting", title, f"# {title}\n\n{body}", saved_at, **kw)


D = "2025-11-17"
notes(
    "meeting-01",
    "Weekly ops sync 2025-11-17",
    f"""
Attendees: {PRIYA}, {JONAS}, {AIKO}, {SAM}

## Notes
- Ticket volume dropped 12% after the new help centre went live.
- The Platform team finished the Postgres 16 upgrade on Saturday.
- Halvorsen Foods reported slow exports in Kestrel Ledger; Jonas Weber is investigating.

## Decisions
- We decided to freeze deployments from 19 December to 5 January.

## Action items
- Aiko Tanaka will draft the holiday support schedule by Wednesday.
- Samuel Osei to update the runbook for certificate renewals by end of next week.
""",
    "2026-12-02T09:00:00+00:00",
    facts=[
        F("Ticket volume dropped 12% after the new help centre went live.", None, "event"),
        F("The Platform team finished the Postgres 16 upgrade on Saturday.", "Platform team", "event", plus(D, -2)),
        F(
            "Halvorsen Foods reported slow exports in Kestrel Ledger; Jonas Weber is investigating.",
            "Halvorsen Foods",
            "event",
        ),
        F(
            "The ops team decided to freeze deployments from 19 December to 5 January.",
            None,
            "decision",
            "2025-12-19",
            "2026-01-05",
        ),
        F(
            "Aiko Tanaka will draft the holiday support schedule by Wednesday.",
            AIKO,
            "decision",
            None,
            coming(D, "wed"),
        ),
        F(
            "Samuel Osei will update the runbook for certificate renewals by end of next week.",
            SAM,
            "decision",
            None,
            plus(D, 11),
        ),
    ],
    times=[
        T("on Saturday", plus(D, -2)),
        T("from 19 December", "2025-12-19"),
        T("to 5 January", "2026-01-05"),
        T("by Wednesday", coming(D, "wed")),
        T("by end of next week", plus(D, 11)),
    ],
    entities=[
        E(PRIYA, "person"),
        E(JONAS, "person"),
        E(AIKO, "person"),
        E(SAM, "person"),
        E("Platform team", "team"),
        E("Postgres", *SYSTEM),
        E("Halvorsen Foods", *CUSTOMER),
        E("Kestrel Ledger", "product"),
    ],
    promises=[
        P(AIKO, "Aiko Tanaka will draft the holiday support schedule", coming(D, "wed")),
        P(SAM, "Samuel Osei will update the runbook for certificate renewals", plus(D, 11)),
    ],
)

D = "2025-11-20"
notes(
    "meeting-02",
    "Sales pipeline review 20 Nov 2025",
    f"""
Attendees: {MARTA}, {TOM}, {DIEGO}

Northwind renewal: verbal yes at EUR 48,000 a year; quote to follow.
Brightline Logistics: pilot decision expected by 28 November.
Halvorsen Foods: upsell of 40 seats discussed for 2026.
Tom Becker will take over the Verdant Cloud contract talks from Jonas Weber.
Diego Alves will prepare a pilot plan for Brightline by Tuesday.
Next review on 4 December.
""",
    "2026-12-02T09:01:00+00:00",
    facts=[
        F("Northwind gave a verbal yes to the renewal at EUR 48,000 a year.", "Northwind", "event"),
        F(
            "The Brightline Logistics pilot decision is expected by 28 November.",
            "Brightline Logistics",
            "fact",
            None,
            "2025-11-28",
        ),
        F("An upsell of 40 seats to Halvorsen Foods was discussed for 2026.", "Halvorsen Foods", "event"),
        F("Tom Becker will take over the Verdant Cloud contract talks from Jonas Weber.", TOM, "decision"),
        F(
            "Diego Alves will prepare a pilot plan for Brightline by Tuesday.",
            DIEGO,
            "decision",
            None,
            coming(D, "tue"),
        ),
        F("The next sales pipeline review is on 4 December.", None, "event", "2025-12-04"),
    ],
    times=[T("by 28 November", "2025-11-28"), T("by Tuesday", coming(D, "tue")), T("on 4 December", "2025-12-04")],
    entities=[
        E(MARTA, "person"),
        E(TOM, "person"),
        E(DIEGO, "person"),
        E("Northwind", *CUSTOMER),
        E("Brightline Logistics", *CUSTOMER),
        E("Halvorsen Foods", *CUSTOMER),
        E("Verdant Cloud", *SUPPLIER),
        E(JONAS, "person"),
    ],
    promises=[
        P(DIEGO, "Diego Alves will prepare a pilot plan for Brightline", coming(D, "tue")),
        P(TOM, "Tom Becker will take over the Verdant Cloud contract talks from Jonas Weber"),
    ],
)

D = "2025-11-12"
notes(
    "meeting-03",
    "Project Heron steering meeting - 12 November 2025",
    f"""
Present: {CHLOE} (chair), {JONAS}, {OMAR}, {LENA}

1. Status
Project Heron replaces the old invoicing module of Kestrel Ledger.
The first release went to five internal users last week.
The budget is EUR 180,000, of which EUR 64,000 is spent.

2. Risks
The tax rules for Portugal are not covered yet.

3. Decisions
The public beta starts on 15 January 2026.
Chloé Martin owns the beta communication plan.

Actions
- Lena Fischer will confirm the Portuguese tax requirements with the auditors by 21 November.
- Omar Haddad will book the demo room in Lyon for the next steering meeting.
""",
    "2026-12-02T09:02:00+00:00",
    facts=[
        F("Project Heron replaces the old invoicing module of Kestrel Ledger.", "Project Heron", "fact"),
        F(
            "The first release of Project Heron went to five internal users last week.",
            "Project Heron",
            "event",
            plus(D, -9),
        ),
        F("The Project Heron budget is EUR 180,000, of which EUR 64,000 is spent.", "Project Heron", "fact"),
        F("The tax rules for Portugal are not covered yet in Project Heron.", "Project Heron", "fact"),
        F("The Project Heron public beta starts on 15 January 2026.", "Project Heron", "decision", "2026-01-15"),
        F("Chloé Martin owns the Project Heron beta communication plan.", CHLOE, "decision"),
        F(
            "Lena Fischer will confirm the Portuguese tax requirements with the auditors by 21 November.",
            LENA,
            "decision",
            None,
            "2025-11-21",
        ),
        F("Omar Haddad will book the demo room in Lyon for the next steering meeting.", OMAR, "decision"),
    ],
    times=[T("last week", plus(D, -9)), T("on 15 January 2026", "2026-01-15"), T("by 21 November", "2025-11-21")],
    entities=[
        E(CHLOE, "person"),
        E(JONAS, "person"),
        E(OMAR, "person"),
        E(LENA, "person"),
        E("Project Heron", "project"),
        E("Kestrel Ledger", "product"),
        E("Portugal", "place"),
        E("Lyon", "place"),
    ],
    promises=[
        P(
            LENA,
            "Lena Fischer will confirm the Portuguese tax requirements with the auditors",
            "2025-11-21",
            "heron-tax",
        ),
        P(OMAR, "Omar Haddad will book the demo room in Lyon for the next steering meeting"),
    ],
)

D = "2025-11-24"
notes(
    "meeting-04",
    "Support retro 24/11/2025",
    f"""
Attendees: {PRIYA}, {AIKO}, {SAM}

What went well: first response time averaged 38 minutes, under the 60 minute target.
What did not: the Halvorsen Foods outage was noticed by the customer before our monitoring.
The support rota changes every Monday at 10:00 and handovers happen in the #support-handover channel.
Priya Shah will ask the Platform team for certificate expiry alerts today.
Aiko Tanaka will write a macro for outage replies by Thursday.
""",
    "2026-12-02T09:03:00+00:00",
    facts=[
        F("First response time averaged 38 minutes, under the 60 minute target.", "Support", "fact"),
        F("The Halvorsen Foods outage was noticed by the customer before the monitoring.", "Halvorsen Foods", "event"),
        F(
            "The support rota changes every Monday at 10:00 and handovers happen in the #support-handover channel.",
            "Support",
            "procedure",
        ),
        F("Priya Shah will ask the Platform team for certificate expiry alerts today.", PRIYA, "decision", D),
        F("Aiko Tanaka will write a macro for outage replies by Thursday.", AIKO, "decision", None, coming(D, "thu")),
    ],
    times=[T("every Monday at 10:00", None), T("today", D), T("by Thursday", coming(D, "thu"))],
    entities=[
        E(PRIYA, "person"),
        E(AIKO, "person"),
        E(SAM, "person"),
        E("Halvorsen Foods", *CUSTOMER),
        E("Platform team", "team"),
    ],
    promises=[
        P(PRIYA, "Priya Shah will ask the Platform team for certificate expiry alerts", D),
        P(AIKO, "Aiko Tanaka will write a macro for outage replies", coming(D, "thu")),
    ],
)

D = "2025-11-06"
notes(
    "meeting-05",
    "Board prep call 2025-11-06",
    f"""
Attendees: {CHLOE}, {LENA}, {MARTA}

- Revenue for October was EUR 412,000, 8% above plan.
- Churn in Q3 was 1.9%.
- The board meeting is on 18 November in Lyon.
- Lena Fischer will send the board pack to the directors by 14 November.
- Marta Ruiz prefers to present the Northwind renewal as a case study.
""",
    "2026-12-02T09:04:00+00:00",
    facts=[
        F("Revenue for October was EUR 412,000, 8% above plan.", None, "fact", "2025-10-01", "2025-10-31"),
        F("Churn in Q3 was 1.9%.", None, "fact", "2025-07-01", "2025-09-30"),
        F("The board meeting is on 18 November in Lyon.", None, "event", "2025-11-18"),
        F(
            "Lena Fischer will send the board pack to the directors by 14 November.",
            LENA,
            "decision",
            None,
            "2025-11-14",
        ),
        F("Marta Ruiz prefers to present the Northwind renewal as a case study.", MARTA, "preference"),
    ],
    times=[T("on 18 November", "2025-11-18"), T("by 14 November", "2025-11-14")],
    entities=[E(CHLOE, "person"), E(LENA, "person"), E(MARTA, "person"), E("Lyon", "place"), E("Northwind", *CUSTOMER)],
    promises=[P(LENA, "Lena Fischer will send the board pack to the directors", "2025-11-14")],
)

D = "2025-12-03"
notes(
    "meeting-06",
    "Brightline pilot kickoff notes (3 Dec 2025)",
    f"""
Attendees: {DIEGO}, {MARTA}, Rui Costa (Brightline Logistics), Inês Ferreira (Brightline Logistics)

Brightline Logistics runs 140 drivers across the three pilot depots.
Success criterion: route planning time down by 30% by the end of the pilot.
Rui Costa will share the depot address lists by Friday.
Diego Alves will run driver training in Porto on 10 December.
Weekly check-ins every Wednesday at 9:30.
""",
    "2026-12-02T09:05:00+00:00",
    facts=[
        F("Brightline Logistics runs 140 drivers across the three pilot depots.", "Brightline Logistics", "fact"),
        F(
            "The pilot success criterion is route planning time down by 30% by the end of the pilot.",
            "Brightline Logistics",
            "fact",
        ),
        F("Rui Costa will share the depot address lists by Friday.", "Rui Costa", "decision", None, coming(D, "fri")),
        F("Diego Alves will run driver training in Porto on 10 December.", DIEGO, "decision", "2025-12-10"),
        F("The Brightline pilot has weekly check-ins every Wednesday at 9:30.", None, "procedure"),
    ],
    times=[T("by Friday", coming(D, "fri")), T("on 10 December", "2025-12-10"), T("every Wednesday at 9:30", None)],
    entities=[
        E(DIEGO, "person"),
        E(MARTA, "person"),
        E("Rui Costa", "person"),
        E("Inês Ferreira", "person"),
        E("Brightline Logistics", *CUSTOMER),
        E("Porto", "place"),
    ],
    promises=[
        P("Rui Costa", "Rui Costa will share the depot address lists", coming(D, "fri")),
        P(DIEGO, "Diego Alves will run driver training in Porto", "2025-12-10"),
    ],
)

D = "2025-10-28"
notes(
    "meeting-07",
    "Security review 28 October 2025",
    f"""
Attendees: {JONAS}, {SAM}, {OMAR}

The penetration test by Redline Security found two medium issues and no high ones.
Both medium issues are in the customer export endpoint.
Samuel Osei will fix both issues before the retest on 12 November.
Laptops must use full-disk encryption; Omar Haddad checks compliance every quarter.
""",
    "2026-12-02T09:06:00+00:00",
    facts=[
        F(
            "The penetration test by Redline Security found two medium issues and no high ones.",
            "Redline Security",
            "event",
        ),
        F("Both medium issues are in the customer export endpoint.", None, "fact"),
        F("Samuel Osei will fix both issues before the retest on 12 November.", SAM, "decision", None, "2025-11-12"),
        F("Laptops must use full-disk encryption; Omar Haddad checks compliance every quarter.", OMAR, "procedure"),
    ],
    times=[T("on 12 November", "2025-11-12"), T("every quarter", None)],
    entities=[E(JONAS, "person"), E(SAM, "person"), E(OMAR, "person"), E("Redline Security", *SUPPLIER)],
    promises=[P(SAM, "Samuel Osei will fix both penetration test issues before the retest", "2025-11-12")],
)

D = "2025-11-26"
notes(
    "meeting-08",
    "Platform planning 2025-11-26",
    f"""
Attendees: {JONAS}, {SAM}, {AIKO}

Platform team priorities for December:
1. Atlas migration of the billing database.
2. Certificate expiry monitoring.
3. Upgrade Django from 4.2 to 5.2 in Kestrel Ledger.
Jonas Weber decided that the Django upgrade waits until after the Atlas migration.
Samuel Osei will send the customer notice about the Atlas migration.
The Platform team prefers Grafana over Datadog for the new dashboards.
""",
    "2026-12-02T09:07:00+00:00",
    facts=[
        F(
            "The Platform team's priorities for December are the Atlas migration, certificate expiry monitoring and the Django upgrade.",
            "Platform team",
            "fact",
            "2025-12-01",
            "2025-12-31",
        ),
        F("Kestrel Ledger will be upgraded from Django 4.2 to 5.2.", "Kestrel Ledger", "decision"),
        F("Jonas Weber decided that the Django upgrade waits until after the Atlas migration.", JONAS, "decision"),
        F("Samuel Osei will send the customer notice about the Atlas migration.", SAM, "decision"),
        F("The Platform team prefers Grafana over Datadog for the new dashboards.", "Platform team", "preference"),
    ],
    times=[T("for December", "2025-12-01")],
    entities=[
        E(JONAS, "person"),
        E(SAM, "person"),
        E(AIKO, "person"),
        E("Platform team", "team"),
        E("Atlas migration", "project"),
        E("Django", *SYSTEM),
        E("Kestrel Ledger", "product"),
        E("Grafana", *SYSTEM),
        E("Datadog", *SYSTEM),
    ],
    promises=[P(SAM, "Samuel Osei will send the customer notice about the Atlas migration", None, "atlas-notice")],
)

# The same note saved twice (pasted again a week later): every fact and promise it yields again is a duplicate.
_heron = next(d for d in DOCS if d["id"] == "meeting-03")
doc(
    "meeting-09",
    "meeting",
    _heron["title"],
    _heron["text"],
    "2026-12-02T09:08:00+00:00",
    facts=LABELS["meeting-03"]["facts"],
    times=LABELS["meeting-03"]["times"],
    entities=LABELS["meeting-03"]["entities"],
    promises=LABELS["meeting-03"]["promises"],
)
LABELS["meeting-09"]["duplicate_of"] = "meeting-03"

D = "2025-12-04"
notes(
    "meeting-10",
    "Sales pipeline review 4 Dec 2025",
    f"""
Attendees: {MARTA}, {TOM}, {DIEGO}, {CHLOE}

Northwind signed the renewal on 2 December.
Brightline Logistics started the pilot; the first depot goes live on Monday.
Tom Becker closed the Verdant Cloud negotiation at EUR 330 per node.
Chloé Martin asked for a forecast for Q1 2026 by 12 December.
Marta Ruiz will draft the Q1 forecast by 12 December.
""",
    "2026-12-02T09:09:00+00:00",
    facts=[
        F("Northwind signed the renewal on 2 December.", "Northwind", "event", "2025-12-02"),
        F(
            "Brightline Logistics started the pilot; the first depot goes live on Monday.",
            "Brightline Logistics",
            "event",
            coming(D, "mon"),
        ),
        F("Tom Becker closed the Verdant Cloud negotiation at EUR 330 per node.", TOM, "event"),
        F("Chloé Martin asked for a forecast for Q1 2026 by 12 December.", CHLOE, "event", None, "2025-12-12"),
        F("Marta Ruiz will draft the Q1 forecast by 12 December.", MARTA, "decision", None, "2025-12-12"),
    ],
    times=[T("on 2 December", "2025-12-02"), T("on Monday", coming(D, "mon")), T("by 12 December", "2025-12-12")],
    entities=[
        E(MARTA, "person"),
        E(TOM, "person"),
        E(DIEGO, "person"),
        E(CHLOE, "person"),
        E("Northwind", *CUSTOMER),
        E("Brightline Logistics", *CUSTOMER),
        E("Verdant Cloud", *SUPPLIER),
    ],
    promises=[P(MARTA, "Marta Ruiz will draft the Q1 forecast", "2025-12-12")],
)


# --- chat: one message a document, with its speaker and time (occurred_at) ---


def chat(id: str, channel: str, speaker: str, at: str, text: str, saved_at: str, **kw: Any) -> None:
    doc(
        id,
        "chat",
        channel,
        text,
        saved_at,
        speaker=speaker,
        occurred_at=at,
        conversation=f"slack:{channel}",
        session=f"slack:{channel}:{at[:10]}",
        **kw,
    )


S = "2026-12-02T10:00:00+00:00"
CHATS = [
    # (channel, speaker, at, text, facts, times, entities, promises)
    (
        "#sales",
        MARTA,
        "2025-11-24T10:02:00+01:00",
        "I'll send the revised quote to Northwind tomorrow",
        [F("Marta Ruiz will send the revised quote to Northwind tomorrow", MARTA, "decision", None, "2025-11-25")],
        [T("tomorrow", "2025-11-25")],
        [E(MARTA, "person"), E("Northwind", *CUSTOMER)],
        [P(MARTA, "Marta Ruiz will send the revised quote to Northwind", "2025-11-25", "northwind-quote")],
    ),
    (
        "#sales",
        TOM,
        "2025-11-24T10:03:00+01:00",
        "great, Anna Lind from Northwind pinged me about it this morning",
        [
            F(
                "Anna Lind from Northwind pinged Tom Becker about the revised quote this morning",
                "Anna Lind",
                "event",
                "2025-11-24",
            )
        ],
        [T("this morning", "2025-11-24")],
        [E(TOM, "person"), E("Anna Lind", "person"), E("Northwind", *CUSTOMER)],
        [],
    ),
    (
        "#sales",
        DIEGO,
        "2025-12-01T09:10:00+00:00",
        "Brightline signed the pilot!! Porto, Lisbon and Braga depots",
        [
            F(
                "Brightline signed the pilot for the Porto, Lisbon and Braga depots",
                "Brightline Logistics",
                "event",
                "2025-12-01",
            )
        ],
        [],
        [
            E(DIEGO, "person"),
            E("Brightline", *CUSTOMER),
            E("Porto", "place"),
            E("Lisbon", "place"),
            E("Braga", "place"),
        ],
        [],
    ),
    (
        "#sales",
        DIEGO,
        "2025-12-01T09:12:00+00:00",
        "I'll set up the pilot accounts by Thursday",
        [F("Diego Alves will set up the pilot accounts by Thursday", DIEGO, "decision", None, "2025-12-04")],
        [T("by Thursday", "2025-12-04")],
        [E(DIEGO, "person")],
        [P(DIEGO, "Diego Alves will set up the Brightline pilot accounts", "2025-12-04", "brightline-accounts")],
    ),
    ("#sales", MARTA, "2025-12-01T09:15:00+00:00", "nice one Diego 🎉", [], [], [E("Diego", "person")], []),
    (
        "#sales",
        TOM,
        "2025-12-02T16:40:00+00:00",
        "Northwind signed the renewal today, two years at 48k a year",
        [F("Northwind signed the renewal today, two years at 48k a year", "Northwind", "event", "2025-12-02")],
        [T("today", "2025-12-02")],
        [E(TOM, "person"), E("Northwind", *CUSTOMER)],
        [],
    ),
    (
        "#support",
        PRIYA,
        "2025-11-25T08:05:00+01:00",
        "Heads up: Halvorsen Foods can't log in to Ledger, looks like the cert on the Rotterdam LB expired",
        [
            F(
                "Halvorsen Foods can't log in to Ledger, looks like the cert on the Rotterdam LB expired",
                "Halvorsen Foods",
                "event",
                "2025-11-25",
            )
        ],
        [],
        [E(PRIYA, "person"), E("Halvorsen Foods", *CUSTOMER), E("Ledger", "product"), E("Rotterdam", "place")],
        [],
    ),
    (
        "#support",
        JONAS,
        "2025-11-25T08:20:00+01:00",
        "Renewed the certificate, Halvorsen is back up. Outage was 47 minutes",
        [
            F(
                "Jonas Weber renewed the certificate and Halvorsen is back up; the outage was 47 minutes",
                JONAS,
                "event",
                "2025-11-25",
            )
        ],
        [],
        [E(JONAS, "person"), E("Halvorsen", *CUSTOMER)],
        [],
    ),
    (
        "#support",
        PRIYA,
        "2025-11-26T11:45:00+00:00",
        "I'll write the incident report for Erik Halvorsen and send it by Monday",
        [
            F(
                "Priya Shah will write the incident report for Erik Halvorsen and send it by Monday",
                PRIYA,
                "decision",
                None,
                "2025-12-01",
            )
        ],
        [T("by Monday", "2025-12-01")],
        [E(PRIYA, "person"), E("Erik Halvorsen", "person")],
        [
            P(
                PRIYA,
                "Priya Shah will write the incident report and send it to Erik Halvorsen",
                "2025-12-01",
                "halvorsen-report",
            )
        ],
    ),
    (
        "#support",
        AIKO,
        "2025-11-24T10:00:00+01:00",
        "Rota handover: I'm on support this week, Sam takes over next Monday",
        [
            F(
                "Aiko Tanaka is on support this week and Sam takes over next Monday",
                AIKO,
                "fact",
                "2025-11-24",
                "2025-12-01",
            )
        ],
        [T("next Monday", "2025-12-01")],
        [E(AIKO, "person"), E("Sam", "person")],
        [],
    ),
    ("#support", SAM, "2025-11-24T10:04:00+01:00", "👍", [], [], [], []),
    (
        "#support",
        AIKO,
        "2025-11-27T15:30:00+01:00",
        "The outage reply macro is done and live in the helpdesk",
        [F("The outage reply macro is done and live in the helpdesk", None, "event", "2025-11-27")],
        [],
        [E(AIKO, "person")],
        [],
    ),
    (
        "#support",
        PRIYA,
        "2025-11-28T09:00:00+01:00",
        "Reminder: we switched the helpdesk from Zendesk to Freshdesk on 1 November, please stop using the old links",
        [
            F(
                "Support switched the helpdesk from Zendesk to Freshdesk on 1 November",
                "Support",
                "event",
                "2025-11-01",
            ),
            F("Support staff should stop using the old Zendesk links", "Support", "procedure"),
        ],
        [T("on 1 November", "2025-11-01")],
        [E(PRIYA, "person"), E("Zendesk", *SYSTEM), E("Freshdesk", *SYSTEM)],
        [],
    ),
    (
        "#platform",
        SAM,
        "2025-11-27T09:10:00+00:00",
        "Atlas moves to Sat 6 Dec, 22:00 CET. I'll send the customer notice today",
        [
            F("The Atlas migration moves to Sat 6 Dec, 22:00 CET", "Atlas migration", "decision", "2025-12-06"),
            F("Samuel Osei will send the customer notice today", SAM, "decision", "2025-11-27"),
        ],
        [T("Sat 6 Dec", "2025-12-06"), T("today", "2025-11-27")],
        [E(SAM, "person"), E("Atlas", "project")],
        [P(SAM, "Samuel Osei will send the customer notice about the Atlas migration", "2025-11-27", "atlas-notice")],
    ),
    (
        "#platform",
        JONAS,
        "2025-11-27T09:15:00+00:00",
        "ok. Django upgrade waits until after Atlas then",
        [F("The Django upgrade waits until after the Atlas migration", None, "decision")],
        [],
        [E(JONAS, "person"), E("Django", *SYSTEM), E("Atlas", "project")],
        [],
    ),
    (
        "#platform",
        AIKO,
        "2025-11-18T14:00:00+01:00",
        "Postgres 16 upgrade went fine on Saturday, no errors since",
        [F("The Postgres 16 upgrade went fine on Saturday, no errors since", "Postgres", "event", "2025-11-15")],
        [T("on Saturday", "2025-11-15")],
        [E(AIKO, "person"), E("Postgres", *SYSTEM)],
        [],
    ),
    (
        "#platform",
        JONAS,
        "2025-11-19T13:35:00+01:00",
        "Verdant Cloud is raising node prices to 345 EUR from February. Tom, can you push back?",
        [F("Verdant Cloud is raising node prices to 345 EUR from February", "Verdant Cloud", "fact", "2026-02-01")],
        [T("from February", "2026-02-01")],
        [E(JONAS, "person"), E("Verdant Cloud", *SUPPLIER), E("Tom", "person")],
        [],
    ),
    (
        "#platform",
        TOM,
        "2025-11-19T13:50:00+01:00",
        "Yes, I'll call their account manager on Friday",
        [F("Tom Becker will call the Verdant Cloud account manager on Friday", TOM, "decision", "2025-11-21")],
        [T("on Friday", "2025-11-21")],
        [E(TOM, "person")],
        [P(TOM, "Tom Becker will call the Verdant Cloud account manager", "2025-11-21")],
    ),
    (
        "#platform",
        SAM,
        "2025-12-07T02:10:00+01:00",
        "Atlas migration done. Billing DB is writable again, took 3h40",
        [
            F(
                "The Atlas migration is done and the billing database is writable again; it took 3h40",
                "Atlas migration",
                "event",
                "2025-12-07",
            )
        ],
        [],
        [E(SAM, "person"), E("Atlas", "project")],
        [],
    ),
    (
        "#general",
        CHLOE,
        "2025-11-10T09:00:00+01:00",
        "Welcome Inés Moreno, who joins Finance as controller today!",
        [F("Inés Moreno joins Finance as controller today", "Inés Moreno", "event", "2025-11-10")],
        [T("today", "2025-11-10")],
        [E(CHLOE, "person"), E("Inés Moreno", "person"), E("Finance", "team")],
        [],
    ),
    (
        "#general",
        OMAR,
        "2025-11-12T12:00:00+01:00",
        "The Lyon office is closed on 11 November next year too, it's a public holiday in France",
        [
            F(
                "The Lyon office is closed on 11 November next year too, a public holiday in France",
                "Lyon office",
                "fact",
                "2026-11-11",
            )
        ],
        [T("on 11 November next year", "2026-11-11")],
        [E(OMAR, "person"), E("Lyon", "place"), E("France", "place")],
        [],
    ),
    (
        "#general",
        CHLOE,
        "2025-11-14T17:00:00+01:00",
        "Company offsite is in Porto from 4 to 6 March 2026. We'll book flights centrally",
        [
            F("The company offsite is in Porto from 4 to 6 March 2026", None, "event", "2026-03-04", "2026-03-06"),
            F("Kestrel Systems will book flights for the offsite centrally", None, "decision"),
        ],
        [T("from 4 to 6 March 2026", "2026-03-04")],
        [E(CHLOE, "person"), E("Porto", "place")],
        [],
    ),
    (
        "#general",
        LENA,
        "2025-11-18T10:30:00+01:00",
        "Expense reports for November are due by the 28th please",
        [F("Expense reports for November are due by the 28th", None, "procedure", None, "2025-11-28")],
        [T("by the 28th", "2025-11-28")],
        [E(LENA, "person")],
        [],
    ),
    (
        "#general",
        LENA,
        "2025-11-18T10:31:00+01:00",
        "and from January we use Pleo cards instead of reimbursements",
        [F("From January Kestrel Systems uses Pleo cards instead of reimbursements", None, "decision", "2026-01-01")],
        [T("from January", "2026-01-01")],
        [E(LENA, "person"), E("Pleo", *SYSTEM)],
        [],
    ),
    (
        "#heron",
        CHLOE,
        "2025-11-13T11:00:00+01:00",
        "Heron public beta confirmed for 15 January. I'll draft the announcement next week",
        [
            F("The Heron public beta is confirmed for 15 January", "Project Heron", "decision", "2026-01-15"),
            F("Chloé Martin will draft the beta announcement next week", CHLOE, "decision", "2025-11-17", "2025-11-21"),
        ],
        [T("for 15 January", "2026-01-15"), T("next week", "2025-11-17")],
        [E(CHLOE, "person"), E("Heron", "project")],
        [P(CHLOE, "Chloé Martin will draft the Heron beta announcement", "2025-11-21")],
    ),
    (
        "#heron",
        LENA,
        "2025-11-13T11:05:00+01:00",
        "I'll confirm the Portuguese tax rules with the auditors by 21 Nov",
        [
            F(
                "Lena Fischer will confirm the Portuguese tax rules with the auditors by 21 November",
                LENA,
                "decision",
                None,
                "2025-11-21",
            )
        ],
        [T("by 21 Nov", "2025-11-21")],
        [E(LENA, "person")],
        [
            P(
                LENA,
                "Lena Fischer will confirm the Portuguese tax requirements with the auditors",
                "2025-11-21",
                "heron-tax",
            )
        ],
    ),
    (
        "#heron",
        LENA,
        "2025-11-21T16:00:00+01:00",
        "Auditors confirmed: Portuguese invoices need the ATCUD code from January",
        [F("Portuguese invoices need the ATCUD code from January", None, "fact", "2026-01-01")],
        [T("from January", "2026-01-01")],
        [E(LENA, "person")],
        [],
    ),
    (
        "#heron",
        JONAS,
        "2025-11-21T16:10:00+01:00",
        "We'll add ATCUD to Heron before the beta",
        [F("The Heron team will add ATCUD to Heron before the beta", "Project Heron", "decision", None, "2026-01-15")],
        [],
        [E(JONAS, "person"), E("Heron", "project")],
        [],
    ),
    (
        "#heron",
        OMAR,
        "2025-11-20T09:00:00+01:00",
        "Demo room in Lyon is booked for the next steering meeting, 10 December at 14:00",
        [
            F(
                "The demo room in Lyon is booked for the next steering meeting on 10 December at 14:00",
                None,
                "event",
                "2025-12-10",
            )
        ],
        [T("10 December at 14:00", "2025-12-10")],
        [E(OMAR, "person"), E("Lyon", "place")],
        [],
    ),
    (
        "dm:marta-priya",
        MARTA,
        "2025-12-02T15:20:00+01:00",
        "QBR with Halvorsen is the 11th in Bergen. I'll prepare the usage report before then",
        [
            F("The QBR with Halvorsen is the 11th in Bergen", "Halvorsen Foods", "event", "2025-12-11"),
            F("Marta Ruiz will prepare the usage report before the QBR", MARTA, "decision", None, "2025-12-11"),
        ],
        [T("the 11th", "2025-12-11")],
        [E(MARTA, "person"), E("Halvorsen", *CUSTOMER), E("Bergen", "place")],
        [P(MARTA, "Marta Ruiz will prepare the usage report for Halvorsen Foods", "2025-12-11")],
    ),
    (
        "dm:marta-priya",
        PRIYA,
        "2025-12-02T15:25:00+01:00",
        "Thanks! Erik prefers short reports, max two pages",
        [F("Erik Halvorsen prefers short reports of two pages at most", "Erik Halvorsen", "preference")],
        [],
        [E(PRIYA, "person"), E("Erik", "person")],
        [],
    ),
    (
        "dm:jonas-aiko",
        JONAS,
        "2025-11-10T10:05:00+01:00",
        "We got budget for two backend engineers in Q1, I'll post the ads Wednesday",
        [
            F("The Platform team got budget for two backend engineers in Q1", "Platform team", "fact", "2026-01-01"),
            F("Jonas Weber will post the job ads on Wednesday", JONAS, "decision", "2025-11-12"),
        ],
        [T("in Q1", "2026-01-01"), T("Wednesday", "2025-11-12")],
        [E(JONAS, "person")],
        [P(JONAS, "Jonas Weber will post the backend job ads", "2025-11-12")],
    ),
    (
        "dm:jonas-aiko",
        AIKO,
        "2025-11-10T10:07:00+01:00",
        "Nice. Can Sam do the interviews? I'm out from 15 Dec to 2 Jan",
        [F("Aiko Tanaka is out from 15 December to 2 January", AIKO, "fact", "2025-12-15", "2026-01-02")],
        [T("from 15 Dec", "2025-12-15"), T("to 2 Jan", "2026-01-02")],
        [E(AIKO, "person"), E("Sam", "person")],
        [],
    ),
    (
        "#random",
        SAM,
        "2025-11-21T17:30:00+01:00",
        "Friday drinks at the Rotterdam office from 17:00 every week, everyone welcome",
        [F("Friday drinks are at the Rotterdam office from 17:00 every week", None, "procedure")],
        [T("from 17:00 every week", None)],
        [E(SAM, "person"), E("Rotterdam", "place")],
        [],
    ),
    (
        "#random",
        DIEGO,
        "2025-11-21T17:35:00+01:00",
        "I'm in Braga that day, next time",
        [],
        [],
        [E(DIEGO, "person"), E("Braga", "place")],
        [],
    ),
    (
        "#sales",
        MARTA,
        "2025-12-04T11:00:00+01:00",
        "I'll draft the Q1 forecast for Chloé by the 12th",
        [
            F(
                "Marta Ruiz will draft the Q1 forecast for Chloé Martin by the 12th",
                MARTA,
                "decision",
                None,
                "2025-12-12",
            )
        ],
        [T("by the 12th", "2025-12-12")],
        [E(MARTA, "person"), E("Chloé", "person")],
        [P(MARTA, "Marta Ruiz will draft the Q1 forecast", "2025-12-12")],
    ),
    (
        "#sales",
        TOM,
        "2025-12-03T10:00:00+01:00",
        "Verdant agreed to 330 per node instead of 345, signed this morning",
        [
            F(
                "Verdant agreed to EUR 330 per node instead of 345, signed this morning",
                "Verdant Cloud",
                "event",
                "2025-12-03",
            )
        ],
        [T("this morning", "2025-12-03")],
        [E(TOM, "person"), E("Verdant", *SUPPLIER)],
        [],
    ),
    (
        "#brightline-pilot",
        DIEGO,
        "2025-12-05T12:00:00+00:00",
        "Rui sent the depot lists. Driver training in Porto still on for Wednesday",
        [
            F("Rui Costa sent the depot lists", "Rui Costa", "event", "2025-12-05"),
            F("Driver training in Porto is still on for Wednesday", None, "event", "2025-12-10"),
        ],
        [T("for Wednesday", "2025-12-10")],
        [E(DIEGO, "person"), E("Rui", "person"), E("Porto", "place")],
        [],
    ),
    (
        "#brightline-pilot",
        MARTA,
        "2025-12-05T12:05:00+00:00",
        "We'll do the weekly check-ins every Wednesday at 9:30 with Rui",
        [F("Kestrel and Brightline do the weekly check-ins every Wednesday at 9:30 with Rui Costa", None, "procedure")],
        [T("every Wednesday at 9:30", None)],
        [E(MARTA, "person"), E("Rui", "person")],
        [],
    ),
    (
        "#brightline-pilot",
        DIEGO,
        "2025-12-08T08:30:00+00:00",
        "First depot (Porto) is live as of this morning",
        [
            F(
                "The first Brightline depot in Porto is live as of this morning",
                "Brightline Logistics",
                "event",
                "2025-12-08",
            )
        ],
        [T("as of this morning", "2025-12-08")],
        [E(DIEGO, "person"), E("Porto", "place")],
        [],
    ),
]
for n, (channel, speaker, at, text, facts, times, entities, promises) in enumerate(CHATS, 1):
    chat(f"chat-{n:02d}", channel, speaker, at, text, S, facts=facts, times=times, entities=entities, promises=promises)


# --- transcripts: WebVTT captions with speakers; the date is only in the title ---


def vtt(turns: list[tuple[str, str]]) -> str:
    cues = ["WEBVTT", ""]
    for i, (speaker, said) in enumerate(turns):
        start, end = i * 9, i * 9 + 8
        cues += [
            f"00:{start // 60:02d}:{start % 60:02d}.000 --> 00:{end // 60:02d}:{end % 60:02d}.000",
            f"<v {speaker}>{said}</v>",
            "",
        ]
    return "\n".join(cues)


D = "2025-11-20"
doc(
    "transcript-01",
    "transcript",
    "Northwind renewal call 2025-11-20",
    vtt(
        [
            (MARTA, "Thanks for joining, Anna. Where did you land on the renewal?"),
            ("Anna Lind", "We're happy to renew at forty-eight thousand euros a year for two years."),
            (MARTA, "Great. I'll send you the revised quote on Monday."),
            ("Anna Lind", "Please address the invoice to our Malmö office, not Stockholm."),
            (MARTA, "Noted. Tom Becker will be your contact for billing from January."),
            ("Anna Lind", "Good. Our finance team closes the books on the fifth of every month."),
        ]
    ),
    "2026-12-02T11:00:00+00:00",
    facts=[
        F("Northwind is happy to renew at forty-eight thousand euros a year for two years.", "Northwind", "decision"),
        F("Marta Ruiz will send Anna Lind the revised quote on Monday.", MARTA, "decision", coming(D, "mon")),
        F("Anna Lind asked to address the invoice to the Malmö office, not Stockholm.", "Anna Lind", "preference"),
        F("Tom Becker will be Northwind's contact for billing from January.", TOM, "decision", "2026-01-01"),
        F("Northwind's finance team closes the books on the fifth of every month.", "Northwind", "procedure"),
    ],
    times=[T("on Monday", coming(D, "mon")), T("from January", "2026-01-01"), T("on the fifth of every month", None)],
    entities=[
        E(MARTA, "person"),
        E("Anna Lind", "person"),
        E("Malmö", "place"),
        E("Stockholm", "place"),
        E(TOM, "person"),
        E("Northwind", *CUSTOMER),
    ],
    promises=[P(MARTA, "Marta Ruiz will send Anna Lind the revised quote", coming(D, "mon"), "northwind-quote")],
)

D = "2025-11-25"
doc(
    "transcript-02",
    "transcript",
    "Halvorsen incident call 25 Nov 2025",
    vtt(
        [
            ("Erik Halvorsen", "We couldn't log in for almost an hour this morning. What happened?"),
            (PRIYA, "A certificate on our Rotterdam load balancer expired at 7:58. Jonas renewed it at 8:45."),
            ("Erik Halvorsen", "I need a written report for our board. Can I have it by Monday?"),
            (PRIYA, "Yes. I'll send you the report by Monday."),
            (JONAS, "We're also adding expiry alerts so it can't happen again."),
            ("Erik Halvorsen", "Our board meets on the fourth of December, so Monday works."),
            (PRIYA, "We'll credit one day of the subscription on the December invoice."),
        ]
    ),
    "2026-12-02T11:01:00+00:00",
    facts=[
        F("Halvorsen Foods couldn't log in for almost an hour this morning.", "Halvorsen Foods", "event", D),
        F(
            "A certificate on the Rotterdam load balancer expired at 7:58 and Jonas Weber renewed it at 8:45.",
            None,
            "event",
            D,
        ),
        F(
            "Erik Halvorsen needs a written report for the Halvorsen Foods board by Monday.",
            "Erik Halvorsen",
            "preference",
            None,
            coming(D, "mon"),
        ),
        F(
            "Priya Shah will send Erik Halvorsen the incident report by Monday.",
            PRIYA,
            "decision",
            None,
            coming(D, "mon"),
        ),
        F("The Platform team is adding certificate expiry alerts.", "Platform team", "decision"),
        F("The Halvorsen Foods board meets on the fourth of December.", "Halvorsen Foods", "event", "2025-12-04"),
        F(
            "Kestrel Systems will credit Halvorsen Foods one day of the subscription on the December invoice.",
            "Halvorsen Foods",
            "decision",
        ),
    ],
    times=[T("this morning", D), T("by Monday", coming(D, "mon")), T("on the fourth of December", "2025-12-04")],
    entities=[E("Erik Halvorsen", "person"), E(PRIYA, "person"), E(JONAS, "person"), E("Rotterdam", "place")],
    promises=[P(PRIYA, "Priya Shah will send the report to Erik Halvorsen", coming(D, "mon"), "halvorsen-report")],
)

D = "2025-11-05"
doc(
    "transcript-03",
    "transcript",
    "Interview debrief 2025-11-05",
    vtt(
        [
            (SAM, "The candidate from Warsaw was strong on Postgres but weak on Django."),
            (JONAS, "Let's not make an offer then. We need both for Ledger."),
            (SAM, "Agreed. The second candidate starts a take-home exercise tomorrow."),
            (JONAS, "I'll review the take-home on Friday."),
            (SAM, "Also, from now on we do interviews on Tuesdays and Thursdays only."),
        ]
    ),
    "2026-12-02T11:02:00+00:00",
    facts=[
        F("The candidate from Warsaw was strong on Postgres but weak on Django.", None, "fact"),
        F("Jonas Weber and Samuel Osei decided not to make an offer to the Warsaw candidate.", JONAS, "decision"),
        F("The second candidate starts a take-home exercise tomorrow.", None, "event", plus(D, 1)),
        F("Jonas Weber will review the take-home exercise on Friday.", JONAS, "decision", coming(D, "fri")),
        F("From now on interviews are held on Tuesdays and Thursdays only.", None, "procedure", D),
    ],
    times=[T("tomorrow", plus(D, 1)), T("on Friday", coming(D, "fri")), T("on Tuesdays and Thursdays", None)],
    entities=[
        E(SAM, "person"),
        E(JONAS, "person"),
        E("Warsaw", "place"),
        E("Postgres", *SYSTEM),
        E("Django", *SYSTEM),
        E("Ledger", "product"),
    ],
    promises=[P(JONAS, "Jonas Weber will review the take-home exercise", coming(D, "fri"))],
)

D = "2025-12-03"
doc(
    "transcript-04",
    "transcript",
    "Brightline kickoff call 3 December 2025",
    vtt(
        [
            ("Rui Costa", "We have a hundred and forty drivers across the three depots."),
            (DIEGO, "Training for Porto is on the tenth. Lisbon and Braga follow in January."),
            ("Rui Costa", "I'll send you the depot address lists by Friday."),
            (MARTA, "And the check-ins will be every Wednesday at half past nine."),
            ("Inês Ferreira", "I'm the contact for the drivers' app accounts."),
            ("Rui Costa", "Our goal is thirty percent less planning time by the end of January."),
        ]
    ),
    "2026-12-02T11:03:00+00:00",
    facts=[
        F(
            "Brightline Logistics has a hundred and forty drivers across the three depots.",
            "Brightline Logistics",
            "fact",
        ),
        F("Driver training for Porto is on the tenth.", None, "event", "2025-12-10"),
        F("Driver training for Lisbon and Braga follows in January.", None, "event", "2026-01-01"),
        F("Rui Costa will send the depot address lists by Friday.", "Rui Costa", "decision", None, coming(D, "fri")),
        F("The check-ins will be every Wednesday at half past nine.", None, "procedure"),
        F("Inês Ferreira is the contact for the drivers' app accounts.", "Inês Ferreira", "fact"),
        F(
            "Brightline's goal is 30 percent less planning time by the end of January.",
            "Brightline Logistics",
            "fact",
            None,
            "2026-01-31",
        ),
    ],
    times=[
        T("on the tenth", "2025-12-10"),
        T("in January", "2026-01-01"),
        T("by Friday", coming(D, "fri")),
        T("every Wednesday at half past nine", None),
        T("by the end of January", "2026-01-31"),
    ],
    entities=[
        E("Rui Costa", "person"),
        E(DIEGO, "person"),
        E(MARTA, "person"),
        E("Inês Ferreira", "person"),
        E("Porto", "place"),
        E("Lisbon", "place"),
        E("Braga", "place"),
    ],
    promises=[P("Rui Costa", "Rui Costa will send the depot address lists", coming(D, "fri"))],
)

D = "2025-11-13"
doc(
    "transcript-05",
    "transcript",
    "Heron design review 13 Nov 2025",
    vtt(
        [
            (CHLOE, "The beta date is the fifteenth of January, that's final."),
            (JONAS, "Then the invoice templates need to be frozen by the twentieth of December."),
            (LENA, "Portugal needs the ATCUD code on every invoice. I'll confirm the details with the auditors."),
            (CHLOE, "Omar, can you get us feedback from the Lyon team?"),
            (OMAR, "Yes, I'll collect their feedback by next Wednesday."),
            (JONAS, "Heron uses the new PDF renderer, not the one from Ledger."),
        ]
    ),
    "2026-12-02T11:04:00+00:00",
    facts=[
        F(
            "The Heron beta date is the fifteenth of January, and it is final.",
            "Project Heron",
            "decision",
            "2026-01-15",
        ),
        F(
            "The Heron invoice templates need to be frozen by the twentieth of December.",
            "Project Heron",
            "fact",
            None,
            "2025-12-20",
        ),
        F("Portugal needs the ATCUD code on every invoice.", "Portugal", "fact"),
        F("Lena Fischer will confirm the ATCUD details with the auditors.", LENA, "decision"),
        F(
            "Omar Haddad will collect feedback from the Lyon team by next Wednesday.",
            OMAR,
            "decision",
            None,
            plus(D, 6),
        ),
        F("Heron uses the new PDF renderer, not the one from Ledger.", "Project Heron", "fact"),
    ],
    times=[
        T("the fifteenth of January", "2026-01-15"),
        T("by the twentieth of December", "2025-12-20"),
        T("by next Wednesday", plus(D, 6)),
    ],
    entities=[
        E(CHLOE, "person"),
        E(JONAS, "person"),
        E(LENA, "person"),
        E(OMAR, "person"),
        E("Portugal", "place"),
        E("Lyon team", "team"),
        E("Heron", "project"),
        E("Ledger", "product"),
    ],
    promises=[
        P(LENA, "Lena Fischer will confirm the Portuguese tax requirements with the auditors", None, "heron-tax"),
        P(OMAR, "Omar Haddad will collect feedback from the Lyon team", plus(D, 6)),
    ],
)

D = "2025-11-21"
doc(
    "transcript-06",
    "transcript",
    "Verdant Cloud call 21 Nov 2025",
    vtt(
        [
            (TOM, "We've been a customer for four years and run thirty-two nodes with you."),
            (
                "Karin Vogt",
                "I understand. I can offer three hundred and thirty euros per node if you sign a two-year term.",
            ),
            (TOM, "That could work. I'll get approval from Chloé Martin by Wednesday."),
            ("Karin Vogt", "The offer is valid until the fifth of December."),
        ]
    ),
    "2026-12-02T11:05:00+00:00",
    facts=[
        F(
            "Kestrel Systems has been a Verdant Cloud customer for four years and runs 32 nodes with Verdant Cloud.",
            "Kestrel Systems",
            "fact",
        ),
        F("Karin Vogt offered EUR 330 per node for a two-year term.", "Karin Vogt", "event"),
        F("Tom Becker will get approval from Chloé Martin by Wednesday.", TOM, "decision", None, coming(D, "wed")),
        F("The Verdant Cloud offer is valid until the fifth of December.", "Verdant Cloud", "fact", None, "2025-12-05"),
    ],
    times=[T("by Wednesday", coming(D, "wed")), T("until the fifth of December", "2025-12-05")],
    entities=[E(TOM, "person"), E("Karin Vogt", "person"), E(CHLOE, "person")],
    promises=[P(TOM, "Tom Becker will get approval from Chloé Martin for the Verdant Cloud offer", coming(D, "wed"))],
)


# --- wiki pages: no occurred_at, no date in the title; the upload time is the only moment ---


def wiki(id: str, title: str, body: str, saved_at: str, **kw: Any) -> None:
    doc(id, "wiki", title, f"# {title}\n\n{body}", saved_at, **kw)


wiki(
    "wiki-01",
    "Support handbook",
    """
## Rota
The support rota changes every Monday at 10:00.
Handovers are written in the #support-handover channel.

## Targets
First response within 60 minutes during office hours.
Priority 1 incidents are escalated to the Platform team on-call engineer immediately.

## Tools
We use Freshdesk for tickets and Statuspage for outage notices.
""",
    "2025-11-28T12:00:00+00:00",
    facts=[
        F("The support rota changes every Monday at 10:00.", "Support", "procedure"),
        F("Support handovers are written in the #support-handover channel.", "Support", "procedure"),
        F("Support's target is a first response within 60 minutes during office hours.", "Support", "fact"),
        F(
            "Priority 1 incidents are escalated to the Platform team on-call engineer immediately.",
            "Platform team",
            "procedure",
        ),
        F("Support uses Freshdesk for tickets and Statuspage for outage notices.", "Support", "fact"),
    ],
    times=[T("every Monday at 10:00", None)],
    entities=[E("Platform team", "team"), E("Freshdesk", *SYSTEM), E("Statuspage", *SYSTEM)],
)

wiki(
    "wiki-02",
    "Kestrel Ledger",
    """
Kestrel Ledger is our accounting product for mid-sized food wholesalers.
It is built with Django and Postgres and hosted on Verdant Cloud in Rotterdam.
The product owner is Jonas Weber.
Customers include Halvorsen Foods and Marlow Fresh.
Pricing starts at EUR 95 per seat per year.
""",
    "2025-11-28T12:01:00+00:00",
    facts=[
        F("Kestrel Ledger is the accounting product for mid-sized food wholesalers.", "Kestrel Ledger", "fact"),
        F(
            "Kestrel Ledger is built with Django and Postgres and hosted on Verdant Cloud in Rotterdam.",
            "Kestrel Ledger",
            "fact",
        ),
        F("The product owner of Kestrel Ledger is Jonas Weber.", JONAS, "fact"),
        F("Kestrel Ledger customers include Halvorsen Foods and Marlow Fresh.", "Kestrel Ledger", "fact"),
        F("Kestrel Ledger pricing starts at EUR 95 per seat per year.", "Kestrel Ledger", "fact"),
    ],
    entities=[
        E("Kestrel Ledger", "product"),
        E("Django", *SYSTEM),
        E("Postgres", *SYSTEM),
        E("Verdant Cloud", *SUPPLIER),
        E("Rotterdam", "place"),
        E(JONAS, "person"),
        E("Halvorsen Foods", *CUSTOMER),
        E("Marlow Fresh", *CUSTOMER),
    ],
)

wiki(
    "wiki-03",
    "Travel and expenses policy",
    """
Book flights through Navan at least 14 days before travel.
Economy class for flights under six hours.
Hotel limit is EUR 160 per night, EUR 220 in London and Paris.
Expense reports are due by the 28th of each month.
From 1 January 2026 company cards from Pleo replace personal reimbursements.
Lena Fischer approves exceptions.
""",
    "2025-11-28T12:02:00+00:00",
    facts=[
        F("Flights are booked through Navan at least 14 days before travel.", None, "procedure"),
        F("Economy class is used for flights under six hours.", None, "procedure"),
        F("The hotel limit is EUR 160 per night, EUR 220 in London and Paris.", None, "procedure"),
        F("Expense reports are due by the 28th of each month.", None, "procedure"),
        F(
            "From 1 January 2026 company cards from Pleo replace personal reimbursements.",
            None,
            "decision",
            "2026-01-01",
        ),
        F("Lena Fischer approves travel exceptions.", LENA, "fact"),
    ],
    times=[T("by the 28th of each month", None), T("From 1 January 2026", "2026-01-01")],
    entities=[E("Navan", *SYSTEM), E("London", "place"), E("Paris", "place"), E("Pleo", *SYSTEM), E(LENA, "person")],
)

wiki(
    "wiki-04",
    "Teams and owners",
    """
Sales: led by Marta Ruiz; Tom Becker handles renewals and supplier contracts.
Support: led by Priya Shah, with Aiko Tanaka and Samuel Osei on the rota.
Platform team: led by Jonas Weber; runs hosting, Postgres and deployments.
Finance: led by Lena Fischer; Inés Moreno is controller.
Facilities and security: Omar Haddad, based in Lyon.
Chloé Martin is CEO.
""",
    "2025-11-28T12:03:00+00:00",
    facts=[
        F("Sales is led by Marta Ruiz.", MARTA, "fact"),
        F("Tom Becker handles renewals and supplier contracts.", TOM, "fact"),
        F("Support is led by Priya Shah, with Aiko Tanaka and Samuel Osei on the rota.", PRIYA, "fact"),
        F("The Platform team is led by Jonas Weber and runs hosting, Postgres and deployments.", JONAS, "fact"),
        F("Finance is led by Lena Fischer and Inés Moreno is controller.", LENA, "fact"),
        F("Omar Haddad handles facilities and security and is based in Lyon.", OMAR, "fact"),
        F("Chloé Martin is CEO.", CHLOE, "fact"),
    ],
    entities=[
        E("Sales", "team"),
        E(MARTA, "person"),
        E(TOM, "person"),
        E("Support", "team"),
        E(PRIYA, "person"),
        E(AIKO, "person"),
        E(SAM, "person"),
        E("Platform team", "team"),
        E(JONAS, "person"),
        E("Finance", "team"),
        E(LENA, "person"),
        E("Inés Moreno", "person"),
        E(OMAR, "person"),
        E("Lyon", "place"),
        E(CHLOE, "person"),
    ],
)

wiki(
    "wiki-05",
    "Deployment procedure",
    """
Deployments happen on Tuesdays and Thursdays between 10:00 and 12:00 CET.
Every change needs one approving review in GitLab.
The deploy freeze runs from 19 December 2025 to 5 January 2026.
Rollbacks are done with the release script, never by hand.
Samuel Osei maintains this page.
""",
    "2025-11-28T12:04:00+00:00",
    facts=[
        F("Deployments happen on Tuesdays and Thursdays between 10:00 and 12:00 CET.", None, "procedure"),
        F("Every change needs one approving review in GitLab.", None, "procedure"),
        F(
            "The deploy freeze runs from 19 December 2025 to 5 January 2026.",
            None,
            "decision",
            "2025-12-19",
            "2026-01-05",
        ),
        F("Rollbacks are done with the release script, never by hand.", None, "procedure"),
        F("Samuel Osei maintains the deployment procedure page.", SAM, "fact"),
    ],
    times=[
        T("on Tuesdays and Thursdays between 10:00 and 12:00 CET", None),
        T("from 19 December 2025", "2025-12-19"),
        T("to 5 January 2026", "2026-01-05"),
    ],
    entities=[E("GitLab", *SYSTEM), E(SAM, "person")],
)

wiki(
    "wiki-06",
    "Customer: Northwind",
    """
Northwind is a Swedish furniture distributor headquartered in Malmö.
They use Kestrel Dispatch for 60 delivery vans.
Contract: EUR 48,000 a year, renewed until 31 December 2027.
Main contact: Anna Lind, purchasing lead.
Account manager: Marta Ruiz.
""",
    "2025-12-05T12:00:00+00:00",
    facts=[
        F("Northwind is a Swedish furniture distributor headquartered in Malmö.", "Northwind", "fact"),
        F("Northwind uses Kestrel Dispatch for 60 delivery vans.", "Northwind", "fact"),
        F(
            "The Northwind contract is EUR 48,000 a year, renewed until 31 December 2027.",
            "Northwind",
            "fact",
            None,
            "2027-12-31",
        ),
        F("Anna Lind, purchasing lead, is the main contact at Northwind.", "Anna Lind", "fact"),
        F("Marta Ruiz is the account manager for Northwind.", MARTA, "fact"),
    ],
    times=[T("until 31 December 2027", "2027-12-31")],
    entities=[
        E("Northwind", *CUSTOMER),
        E("Malmö", "place"),
        E("Kestrel Dispatch", "product"),
        E("Anna Lind", "person"),
        E(MARTA, "person"),
    ],
)

wiki(
    "wiki-07",
    "Onboarding checklist",
    """
On day one, IT hands over the laptop and the YubiKey.
New starters join the #general and #random channels.
Each new starter gets a buddy from another team for the first month.
Payroll closes on the 20th of each month, so contracts signed later are paid the month after.
Omar Haddad runs the security briefing every other Thursday.
""",
    "2025-11-28T12:05:00+00:00",
    facts=[
        F("On day one, IT hands over the laptop and the YubiKey.", None, "procedure"),
        F("New starters join the #general and #random channels.", None, "procedure"),
        F("Each new starter gets a buddy from another team for the first month.", None, "procedure"),
        F(
            "Payroll closes on the 20th of each month, so contracts signed later are paid the month after.",
            None,
            "procedure",
        ),
        F("Omar Haddad runs the security briefing every other Thursday.", OMAR, "procedure"),
    ],
    times=[T("on the 20th of each month", None), T("every other Thursday", None)],
    entities=[E("YubiKey", "product"), E(OMAR, "person")],
)

wiki(
    "wiki-08",
    "Office locations",
    """
Rotterdam is our headquarters, at Wijnhaven 21, with 34 desks.
Lyon hosts the finance and facilities teams; the lease runs until 31 March 2027.
Porto opened in September 2025 for the Brightline pilot team.
Visitors sign in at reception; the Rotterdam office is open from 8:00 to 19:00 on weekdays.
""",
    "2025-11-28T12:06:00+00:00",
    facts=[
        F("Rotterdam is the headquarters, at Wijnhaven 21, with 34 desks.", "Rotterdam", "fact"),
        F(
            "Lyon hosts the finance and facilities teams; the lease runs until 31 March 2027.",
            "Lyon",
            "fact",
            None,
            "2027-03-31",
        ),
        F("The Porto office opened in September 2025 for the Brightline pilot team.", "Porto", "event", "2025-09-01"),
        F("Visitors sign in at reception.", None, "procedure"),
        F("The Rotterdam office is open from 8:00 to 19:00 on weekdays.", "Rotterdam", "fact"),
    ],
    times=[
        T("until 31 March 2027", "2027-03-31"),
        T("in September 2025", "2025-09-01"),
        T("from 8:00 to 19:00 on weekdays", None),
    ],
    entities=[E("Rotterdam", "place"), E("Lyon", "place"), E("Porto", "place"), E("Brightline", *CUSTOMER)],
)


# --- a second batch, written after the rules were tuned (January to March 2026); all of it is held out ---

# A batch written after the rules were tuned, all held out.
WRITTEN_LATER = frozenset(
    {
        "mail-11",
        "mail-12",
        "meeting-11",
        "meeting-12",
        *(f"chat-{n}" for n in range(41, 47)),
        "transcript-07",
        "wiki-09",
    }
)
TOMASZ = "Tomasz Nowak"

D = "2026-01-19"
mail(
    "mail-11",
    "Heron beta: first days",
    "Jonas Weber <jonas.weber@kestrel.example>",
    "Chloé Martin <chloe.martin@kestrel.example>",
    D,
    "Mon, 19 Jan 2026 09:40:00 +0100",
    """
Chloé,

The Heron public beta went live on 15 January with 23 customers.
Marlow Fresh found a rounding error in the VAT totals on credit notes, and Samuel Osei has already fixed it.
From March, Heron will e-mail the invoices to customers itself.
I'll send you a summary of the beta feedback by Thursday.
Should we open the beta to more customers?

Jonas
""",
    "2026-12-09T08:30:00+00:00",
    facts=[
        F("The Heron public beta went live on 15 January with 23 customers.", "Project Heron", "event", "2026-01-15"),
        F(
            "Marlow Fresh found a rounding error in the VAT totals on credit notes, and Samuel Osei has already fixed it.",
            "Marlow Fresh",
            "event",
        ),
        F("From March, Heron will e-mail the invoices to customers itself.", "Project Heron", "decision", "2026-03-01"),
        F(
            "Jonas Weber will send Chloé Martin a summary of the beta feedback by Thursday.",
            JONAS,
            "decision",
            None,
            coming(D, "thu"),
        ),
    ],
    times=[T("on 15 January", "2026-01-15"), T("From March", "2026-03-01"), T("by Thursday", coming(D, "thu"))],
    entities=[
        E(JONAS, "person"),
        E(CHLOE, "person"),
        E("Heron", "project"),
        E("Marlow Fresh", *CUSTOMER),
        E(SAM, "person"),
    ],
    promises=[P(JONAS, "Jonas Weber will send Chloé Martin a summary of the Heron beta feedback", coming(D, "thu"))],
)

D = "2026-02-25"
mail(
    "mail-12",
    "Porto offsite: travel and rooms",
    "Omar Haddad <omar.haddad@kestrel.example>",
    "all@kestrel.example",
    D,
    "Wed, 25 Feb 2026 16:05:00 +0100",
    """
Hi all,

The offsite flights are booked, and Navan will e-mail your tickets.
We stay at Casa do Rio in Porto, two people to a room.
The bus leaves the airport at 14:30 on Wednesday 4 March.
I'll send the room list tomorrow.

Omar Haddad
Facilities
""",
    "2026-12-09T08:31:00+00:00",
    facts=[
        F("The offsite flights are booked, and Navan will e-mail the tickets.", None, "fact"),
        F("Kestrel Systems stays at Casa do Rio in Porto for the offsite, two people to a room.", None, "fact"),
        F("The bus leaves the airport at 14:30 on Wednesday 4 March.", None, "event", "2026-03-04"),
        F("Omar Haddad will send the room list tomorrow.", OMAR, "decision", None, plus(D, 1)),
    ],
    times=[T("on Wednesday 4 March", "2026-03-04"), T("tomorrow", plus(D, 1))],
    entities=[
        E(OMAR, "person"),
        E("Navan", *SYSTEM, "organisation"),
        E("Casa do Rio", "place", "organisation"),
        E("Porto", "place"),
    ],
    promises=[P(OMAR, "Omar Haddad will send the offsite room list", plus(D, 1))],
)

D = "2026-01-12"
notes(
    "meeting-11",
    "Platform planning, 12 Jan 2026",
    f"""
Attendees: {JONAS}, {SAM}, {AIKO}, {TOMASZ}

## Notes
- Tomasz Nowak has joined the Platform team as a backend engineer.
- Jonas Weber attends the Verdant Cloud quarterly review on 20 January.

## Decisions
- Hotfixes now need a second reviewer.

## Action items
- Samuel Osei: renew the staging certificates by Friday.
- Tomasz Nowak: write the Osprey design doc by 30 January.
- Aiko Tanaka will move the on-call alerts to the new dashboards next week.
""",
    "2026-12-09T09:00:00+00:00",
    facts=[
        F("Tomasz Nowak has joined the Platform team as a backend engineer.", TOMASZ, "event"),
        F("Jonas Weber attends the Verdant Cloud quarterly review on 20 January.", JONAS, "event", "2026-01-20"),
        F("Hotfixes now need a second reviewer.", None, "decision"),
        F("Samuel Osei will renew the staging certificates by Friday.", SAM, "decision", None, coming(D, "fri")),
        F("Tomasz Nowak will write the Osprey design doc by 30 January.", TOMASZ, "decision", None, "2026-01-30"),
        F(
            "Aiko Tanaka will move the on-call alerts to the new dashboards next week.",
            AIKO,
            "decision",
            plus(D, 7),
            plus(D, 11),
        ),
    ],
    times=[
        T("on 20 January", "2026-01-20"),
        T("by Friday", coming(D, "fri")),
        T("by 30 January", "2026-01-30"),
        T("next week", plus(D, 7)),
    ],
    entities=[
        E(JONAS, "person"),
        E(SAM, "person"),
        E(AIKO, "person"),
        E(TOMASZ, "person"),
        E("Platform team", "team"),
        E("Verdant Cloud", *SUPPLIER),
        E("Osprey", "project"),
    ],
    promises=[
        P(SAM, "Samuel Osei will renew the staging certificates", coming(D, "fri")),
        P(TOMASZ, "Tomasz Nowak will write the Osprey design doc", "2026-01-30"),
        P(AIKO, "Aiko Tanaka will move the on-call alerts to the new dashboards", plus(D, 11)),
    ],
)

D = "2026-02-16"
notes(
    "meeting-12",
    "Account review 16/02/2026",
    f"""
Attendees: {MARTA}, {TOM}, {DIEGO}

- The Brightline pilot has ended and Brightline Logistics signed a three-year contract for all 11 depots.
- Northwind wants to add 15 vans in April.
- Marlow Fresh is unhappy with the new invoice layout.
- Marta Ruiz hopes to close an upsell of 25 seats with Marlow Fresh in Q2.

Actions
- Diego Alves: plan the rollout of the other eight depots with Brightline by 27 February.
- Tom Becker: send Northwind a quote for the extra vans by Wednesday.
""",
    "2026-12-09T09:01:00+00:00",
    facts=[
        F(
            "The Brightline pilot has ended and Brightline Logistics signed a three-year contract for all 11 depots.",
            "Brightline Logistics",
            "event",
        ),
        F("Northwind wants to add 15 vans in April.", "Northwind", "preference", "2026-04-01"),
        F("Marlow Fresh is unhappy with the new invoice layout.", "Marlow Fresh", "fact"),
        F(
            "Marta Ruiz hopes to close an upsell of 25 seats with Marlow Fresh in Q2.",
            MARTA,
            "preference",
            "2026-04-01",
        ),
        F(
            "Diego Alves will plan the rollout of the other eight depots with Brightline by 27 February.",
            DIEGO,
            "decision",
            None,
            "2026-02-27",
        ),
        F(
            "Tom Becker will send Northwind a quote for the extra vans by Wednesday.",
            TOM,
            "decision",
            None,
            coming(D, "wed"),
        ),
    ],
    times=[
        T("in April", "2026-04-01"),
        T("in Q2", "2026-04-01"),
        T("by 27 February", "2026-02-27"),
        T("by Wednesday", coming(D, "wed")),
    ],
    entities=[
        E(MARTA, "person"),
        E(TOM, "person"),
        E(DIEGO, "person"),
        E("Brightline Logistics", *CUSTOMER),
        E("Northwind", *CUSTOMER),
        E("Marlow Fresh", *CUSTOMER),
    ],
    promises=[
        P(DIEGO, "Diego Alves will plan the rollout of the other eight Brightline depots", "2026-02-27"),
        P(TOM, "Tom Becker will send Northwind a quote for the extra vans", coming(D, "wed")),
    ],
)

CHATS_LATER = [
    # (channel, speaker, at, text, facts, times, entities, promises); chat-41 asks and chat-42 answers
    (
        "#support",
        PRIYA,
        "2026-01-27T09:15:00+01:00",
        "Aiko, can you update the Freshdesk macros for the new invoice layout by Friday?",
        [],
        [],
        [E(PRIYA, "person"), E("Aiko", "person"), E("Freshdesk", *SYSTEM)],
        [],
    ),
    (
        "#support",
        AIKO,
        "2026-01-27T09:22:00+01:00",
        "Sure, I'll have them done by Friday",
        [F("Aiko Tanaka will have the Freshdesk macros done by Friday", AIKO, "decision", None, "2026-01-30")],
        [T("by Friday", "2026-01-30")],
        [E(AIKO, "person")],
        [P(AIKO, "Aiko Tanaka will update the Freshdesk macros for the new invoice layout", "2026-01-30")],
    ),
    (
        "#platform",
        JONAS,
        "2026-01-28T11:00:00+01:00",
        "From the Platform team: we'll move staging to the new Verdant cluster on the 4th, expect about 20 minutes of downtime",
        [
            F(
                "The Platform team will move staging to the new Verdant cluster on the 4th, with about 20 minutes of downtime",
                "Platform team",
                "decision",
                "2026-02-04",
            )
        ],
        [T("on the 4th", "2026-02-04")],
        [E(JONAS, "person"), E("Platform team", "team"), E("Verdant", *SUPPLIER)],
        [P("Platform team", "The Platform team will move staging to the new Verdant cluster", "2026-02-04")],
    ),
    (
        "#general",
        LENA,
        "2026-01-30T10:00:00+01:00",
        "Finance holds expense office hours every Tuesday at 9:00 in #finance. I'll also send everyone the new Pleo guide next week",
        [
            F("Finance holds expense office hours every Tuesday at 9:00 in #finance", "Finance", "procedure"),
            F(
                "Lena Fischer will also send everyone the new Pleo guide next week",
                LENA,
                "decision",
                "2026-02-02",
                "2026-02-06",
            ),
        ],
        [T("every Tuesday at 9:00", None), T("next week", "2026-02-02")],
        [E(LENA, "person"), E("Finance", "team"), E("Pleo", *SYSTEM)],
        [P(LENA, "Lena Fischer will send everyone the new Pleo guide", "2026-02-06")],
    ),
    (
        "#sales",
        TOM,
        "2026-02-18T15:30:00+01:00",
        "Sent Northwind the quote for the 15 extra vans this morning. Anna wants them on the road by 1 April, if Legal signs off in time we can make it",
        [
            F("Tom Becker sent Northwind the quote for the 15 extra vans this morning", TOM, "event", "2026-02-18"),
            F(
                "Anna Lind wants the 15 extra vans on the road by 1 April",
                "Anna Lind",
                "preference",
                None,
                "2026-04-01",
            ),
            F("If Legal signs off in time, Kestrel Systems can meet that date", None, "fact"),
        ],
        [T("this morning", "2026-02-18"), T("by 1 April", "2026-04-01")],
        [E(TOM, "person"), E("Northwind", *CUSTOMER), E("Anna", "person"), E("Legal", "team")],
        [],
    ),
    (
        "#heron",
        SAM,
        "2026-03-10T17:10:00+01:00",
        "Heron 1.1 is out, the invoice total is back on page one. Hopefully the XML export lands by the end of the month",
        [
            F("Heron 1.1 is out and the invoice total is back on page one", "Project Heron", "event", "2026-03-10"),
            F("Hopefully the XML export lands by the end of the month", None, "fact", None, "2026-03-31"),
        ],
        [T("by the end of the month", "2026-03-31")],
        [E(SAM, "person"), E("Heron", "project")],
        [],
    ),
]
S_LATER = "2026-12-09T10:00:00+00:00"
if len(CHATS) != 40:
    raise SystemExit("the later chats are numbered from chat-41: CHATS must hold 40 messages")
for n, (channel, speaker, at, text, facts, times, entities, promises) in enumerate(CHATS_LATER, 41):
    chat(
        f"chat-{n}", channel, speaker, at, text, S_LATER, facts=facts, times=times, entities=entities, promises=promises
    )

D = "2026-02-24"
doc(
    "transcript-07",
    "transcript",
    "Marlow Fresh call 24 February 2026",
    vtt(
        [
            (
                "Hannah Brooks",
                "Our drivers hand the invoices to shop owners, and the new layout puts the total on page two.",
            ),
            (PRIYA, "Understood. Sam, can you move the total back to the first page?"),
            (SAM, "Yes, I'll have it in the release on the tenth of March."),
            ("Hannah Brooks", "Good. We're also opening a new depot in Leeds."),
            (PRIYA, "Then I'll send you the onboarding checklist for Leeds by Monday."),
            ("Hannah Brooks", "Our ops team meets on the first Monday of every month, you're welcome to join."),
            (PRIYA, "Happy to, I'll be there."),
        ]
    ),
    "2026-12-09T11:00:00+00:00",
    facts=[
        F(
            "Marlow Fresh drivers hand the invoices to shop owners, and the new layout puts the total on page two.",
            "Marlow Fresh",
            "fact",
        ),
        F(
            "Samuel Osei will move the invoice total back to the first page in the release on the tenth of March.",
            SAM,
            "decision",
            "2026-03-10",
        ),
        F("Marlow Fresh is opening a new depot in Leeds.", "Marlow Fresh", "fact"),
        F(
            "Priya Shah will send Hannah Brooks the onboarding checklist for Leeds by Monday.",
            PRIYA,
            "decision",
            None,
            coming(D, "mon"),
        ),
        F("The Marlow Fresh ops team meets on the first Monday of every month.", "Marlow Fresh", "procedure"),
        F("Priya Shah will join the Marlow Fresh ops meeting.", PRIYA, "decision"),
    ],
    times=[
        T("on the tenth of March", "2026-03-10"),
        T("by Monday", coming(D, "mon")),
        T("on the first Monday of every month", None),
    ],
    entities=[
        E("Hannah Brooks", "person"),
        E(PRIYA, "person"),
        E(SAM, "person"),
        E("Marlow Fresh", *CUSTOMER),
        E("Leeds", "place"),
    ],
    promises=[
        P(SAM, "Samuel Osei will move the invoice total back to the first page", "2026-03-10"),
        P(PRIYA, "Priya Shah will send Hannah Brooks the onboarding checklist for Leeds", coming(D, "mon")),
    ],
)

wiki(
    "wiki-09",
    "Project Osprey",
    """
Osprey is the reporting warehouse for Kestrel Ledger data.
It runs on ClickHouse.
Tomasz Nowak leads the project.
The first customer reports ship in June.
""",
    "2026-02-20T12:00:00+00:00",
    facts=[
        F("Osprey is the reporting warehouse for Kestrel Ledger data.", "Project Osprey", "fact"),
        F("Osprey runs on ClickHouse.", "Project Osprey", "fact"),
        F("Tomasz Nowak leads Project Osprey.", TOMASZ, "fact"),
        F("The first Osprey customer reports ship in June.", "Project Osprey", "decision", None),
    ],
    times=[T("in June", None)],  # a page with no date of its own: which June is not known
    entities=[
        E("Project Osprey", "project"),
        E("Kestrel Ledger", "product"),
        E("ClickHouse", *SYSTEM),
        E(TOMASZ, "person"),
    ],
)


def held_out(docs: list[dict[str, Any]]) -> None:
    """The fixed rule: within each kind, in id order, every fifth document (the 5th, 10th, ...) is held out.
    The documents written later (WRITTEN_LATER) are all held out. A document saved twice goes with the one it repeats."""
    for kind in sorted({d["kind"] for d in docs}):
        for i, d in enumerate(sorted((d for d in docs if d["kind"] == kind), key=lambda d: d["id"])):
            d["split"] = "heldout" if i % 5 == 4 else "dev"
    for d in docs:
        if d["id"] in WRITTEN_LATER:
            d["split"] = "heldout"
    split = {d["id"]: d["split"] for d in docs}
    for d in docs:
        original = LABELS[d["id"]].get("duplicate_of")
        if original:
            d["split"] = split[original]


def main() -> None:
    held_out(DOCS)
    order = ["id", "kind", "split", "title", "saved_at", "occurred_at", "speaker", "conversation", "session", "text"]
    with (HERE / "docs.jsonl").open("w") as out:
        for d in DOCS:
            out.write(json.dumps({k: d[k] for k in order if k in d}, ensure_ascii=False) + "\n")
    with (HERE / "labels.jsonl").open("w") as out:
        for d in DOCS:
            out.write(json.dumps(LABELS[d["id"]], ensure_ascii=False) + "\n")
    facts = sum(len(x["facts"]) for x in LABELS.values())
    print(
        f"{len(DOCS)} documents, {facts} facts, {sum(len(x['times']) for x in LABELS.values())} times, "
        f"{sum(len(x['entities']) for x in LABELS.values())} entities, {sum(len(x['promises']) for x in LABELS.values())} promises"
    )


if __name__ == "__main__":
    main()
