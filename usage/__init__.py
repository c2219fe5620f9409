"""Plans, metering and usage: what each organisation may spend, what every call and ingestion
costs, and what people see of it.

- ``models``: Plan, Account (an organisation's plan and credit balance), Month (the month's counts),
  Miss (a question that found no evidence);
- ``prices``: what each kind of work costs, in one place;
- ``metering``: charging and refunding with single conditional updates, exact under concurrency;
- ``services``: adding credits and changing plans (waiting knowledge resumes);
- ``selectors``: an organisation's month, a member's month.

The admins' overview page, which shows these figures beside every other app's, is the ``overview``
app at the top of the stack.
"""
