"""Organisations added in the admin before it used the service get what the service gives."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from brain.models import Category, Features
from conftest import make_actor, make_org
from memory.documents.saving import add_document

repair = importlib.import_module("brain.migrations.0007_repair_organisations_made_in_the_admin").repair


@pytest.mark.django_db
def test_an_organisation_without_its_default_category_or_switches_is_repaired_and_takes_knowledge():
    broken, whole = make_org(), make_org()
    Category.objects.filter(org=broken).delete()
    Features.objects.filter(org=broken).delete()
    repair(apps, None)
    assert Category.objects.get(org=broken, slug=Category.DEFAULT_SLUG).name == "General"
    assert Features.objects.filter(org=broken).exists()
    assert Category.objects.filter(org=whole).count() == 1
    saved = add_document(actor=make_actor(broken), title="Depots", content="Depots in Leith and Hull.")
    assert saved.document.category.slug == Category.DEFAULT_SLUG
