"""What a name plainly is, whoever reads it: software, a well-known place, a team, a company or a
product by the word its name ends with. The reading of a source (``memory.documents.source``) and
entity kinds (``memory.extraction.kinds``) both ask; the words live here, once."""

from __future__ import annotations


def word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Software and services a team uses: the model calls them people or companies.
TECHNOLOGIES = word_set(
    """django postgres postgresql mysql mariadb sqlite mongodb redis kafka rabbitmq celery elasticsearch
    kubernetes k8s docker terraform ansible nginx linux windows macos ios android python java javascript
    typescript react node.js nodejs rust golang aws azure gcp heroku vercel cloudflare github gitlab bitbucket
    jira confluence slack teams zoom notion trello asana linear figma salesforce hubspot zendesk freshdesk
    intercom grafana datadog sentry prometheus pagerduty opsgenie statuspage okta yubikey 1password bitwarden
    stripe xero quickbooks sap netsuite workday personio bamboohr pleo navan docusign dropbox gmail outlook
    excel sharepoint tableau looker snowflake bigquery airflow dbt twilio sendgrid mailchimp shopify"""
)
# The ones that are no ordinary English word as well, so a capitalised one is always the software.
SOFTWARE_NAMES = TECHNOLOGIES - word_set("teams linear windows rust node zoom notion excel outlook sentry okta xero")
# Places the small model most often calls people: countries and large cities, as a floor under NER.
PLACES = word_set(
    """rotterdam amsterdam lyon paris porto lisbon braga bergen oslo stockholm malmö malmo copenhagen warsaw
    london berlin munich hamburg madrid barcelona rome milan vienna zurich geneva brussels dublin prague
    budapest helsinki athens istanbul boston chicago toronto tokyo singapore sydney
    portugal france spain germany italy sweden norway denmark finland poland netherlands belgium
    ireland austria switzerland"""
)
# The last word of a company's name ("Brightline Logistics", "Verdant Cloud"): the small model calls
# many of these people.
COMPANY_WORDS = word_set(
    """logistics foods food print printing systems labs lab group holdings industries solutions software
    technologies technology partners consulting consultants capital media services networks retail bank
    insurance energy health healthcare pharma airlines airways motors studios press freight shipping transport
    cloud telecom electronics manufacturing analytics ventures hotels robotics agency associates brewery
    bakery farms markets supermarkets stores fresh trading imports exports supplies"""
)
# The last word of a product's name ("Kestrel Ledger", "Kestrel Dispatch").
PRODUCT_WORDS = word_set("ledger dispatch desk hub suite app portal console pay connect dashboard tracker planner")


# A company's departments, named alone ("joins Finance", "ask Legal"): teams.
DEPARTMENTS = word_set(
    """finance sales marketing legal engineering operations procurement accounting hr recruiting support
    facilities compliance"""
)


def plain_kind(name: str) -> str | None:
    """The kind a name plainly has whatever the model says: software, a well-known place, a team, a
    company or a product by the word its name ends with."""
    folded = name.casefold().strip()
    words = folded.split()
    if folded in TECHNOLOGIES or words and words[0] in TECHNOLOGIES and len(words) == 1:
        return "system"
    if folded in PLACES:
        return "place"
    if folded.endswith(" team") or folded in DEPARTMENTS:
        return "team"
    if len(words) >= 2 and name.split()[0][:1].isupper():
        if words[-1] in COMPANY_WORDS:
            return "organisation"
        if words[-1] in PRODUCT_WORDS:
            return "product"
    return None
