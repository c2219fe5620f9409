"""An organisation's knowledge as a portable archive, and its deletion.

- ``decisions``: for every model, whether an archive holds its rows and how a row finds its organisation;
- ``archive``: the layout (manifest and JSON Lines files) and the checks an archive must pass;
- ``exporting``: writes an organisation's archive (``manage.py export_org``);
- ``importing``: loads one as a new organisation (``manage.py import_org``);
- ``leaving``: deletes an organisation and everything of it (``manage.py delete_org``, the admin).
"""
