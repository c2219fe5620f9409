"""The core's domain rules, which every app stands on: who is acting (``actors``), the one error
hierarchy (``errors``), organisations, members, tokens, activities, reports and call records
(``services`` writes, ``selectors`` reads), the audit trail (``audit``), the "Personal memories only"
rule (``personal``), what Brain accepts as input (``inputs``), invitations (``invitations``), and the
work waiting for people (``needs``). The models they read and write are ``brain.models``, where
Django looks for them."""
