from django.apps import AppConfig


class OverviewConfig(AppConfig):
    name = "overview"
